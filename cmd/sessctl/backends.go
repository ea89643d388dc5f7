package main

import (
	"os"

	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// remoteBackends are the remotes sync and --remote reach besides
// directories: s3://, configured by the AWS_* variables.
func remoteBackends() map[string]replica.Backend {
	return map[string]replica.Backend{s3.Scheme: s3.Backend(s3.EnvConfig(os.LookupEnv))}
}
