package s3_test

import (
	"os"

	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// A Remote on an S3 bucket: replica picks the Backend by the remote's
// scheme, and links no S3 client but the one passed here. (Open touches
// no network; Push, Pull and Sync do.)
func Example() {
	agentDir := os.ExpandEnv("$HOME/.pi/agent")
	r, err := replica.Open(replica.Options{
		Remote:   "s3://team/sessions",
		Backends: map[string]replica.Backend{s3.Scheme: s3.Backend(s3.EnvConfig(os.LookupEnv))},
		AgentDir: agentDir,
	})
	if err != nil {
		return
	}
	defer r.Close()
}
