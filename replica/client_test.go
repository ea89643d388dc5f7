package replica_test

import (
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/internal/clienttest"
)

// TestClientConformance holds the directory's Client to the contract of
// replica.Client (clienttest.Conformance; replica/s3 holds the S3 one to
// it against the real MinIO server).
func TestClientConformance(t *testing.T) {
	mk := func(t *testing.T, dir string) replica.Client {
		c, err := replica.NewDirClient(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clienttest.Conformance(t,
		func(t *testing.T) replica.Client { return mk(t, t.TempDir()) },
		func(t *testing.T) replica.Client { return mk(t, filepath.Join(t.TempDir(), "missing")) })
}
