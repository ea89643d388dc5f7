// Package s3 is the replica.Client of an S3-compatible bucket (AWS S3,
// MinIO, R2, GCS's S3 API), kept apart from package replica so that only
// the programs that reach S3 link its client (minio-go and its modules).
//
// NewClient opens the objects below a prefix of a bucket; Backend opens
// s3://bucket/prefix remotes for replica.Options.Backends; EnvConfig
// reads the endpoint and credentials from the AWS_* variables:
//
//	r, err := replica.Open(replica.Options{
//		Remote:   "s3://team/sessions",
//		Backends: map[string]replica.Backend{s3.Scheme: s3.Backend(s3.EnvConfig(os.LookupEnv))},
//		AgentDir: agentDir,
//	})
//
// Writes are single PUTs with Content-MD5, so an object is stored whole
// or not at all; PutIfAbsent sends If-None-Match: * and PutIfMatch
// If-Match.
package s3
