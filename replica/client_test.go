package replica_test

import (
	"context"
	"io"
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

// read returns the object's bytes and what Get said of it.
func read(t *testing.T, c replica.Client, key string) ([]byte, replica.ObjectInfo, error) {
	t.Helper()
	rc, info, err := c.Get(context.Background(), key)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if int64(len(data)) != info.Size || info.Key != key {
		t.Errorf("get %s: %d bytes, info %+v", key, len(data), info)
	}
	return data, info, nil
}

// listKeys lists the keys below prefix, and what the listing said of them.
func listKeys(t *testing.T, c replica.Client, prefix string) ([]string, []replica.ObjectInfo) {
	t.Helper()
	var keys []string
	var infos []replica.ObjectInfo
	for o, err := range c.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("list %q: %v", prefix, err)
		}
		keys = append(keys, o.Key)
		infos = append(infos, o)
	}
	return keys, infos
}
