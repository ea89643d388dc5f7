package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

// sync refuses to run without a remote (nothing is uploaded unless
// configured) and a verb it does not know.
func TestSyncUsage(t *testing.T) {
	for _, args := range [][]string{
		{"sync", "push"},
		{"sync", "upload", "--remote", "s3://b/p"},
		{"sync", "push", "--remote", "b/p"},
		{"sync", "push", "--remote", "s3://b/p", "--cwd-map", "nothing"},
	} {
		_, errOut, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "hint:") {
			t.Errorf("sessctl %v: exit %d, stderr %q; want exit %d", args, code, errOut, exitUsage)
		}
	}
}

// sync push, status and pull against the real server, configured by the
// AWS_* variables: a session of one agent directory reaches another, and
// status then says everything is in sync.
func TestSyncCommand(t *testing.T) {
	srv := testenv.MinIO(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c, err := minio.New(srv.Addr, &minio.Options{Creds: credentials.NewStaticV4(srv.User, srv.Password, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), "cli-sync", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	s, err := engine.Create(context.Background(), "/cli/proj", engine.Options{AgentDir: a})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(json.RawMessage(`{"role":"user","content":"hi","timestamp":1}`))
	s.AppendMessage(json.RawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	s.Close()
	remote := "s3://cli-sync/me"
	out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", a)
	if code != exitOK || !strings.Contains(out, "1 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", b, "--json")
	var st struct {
		Sessions []struct{ State string }
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || len(st.Sessions) != 1 || st.Sessions[0].State != "new remote" {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "sync", "pull", "--remote", remote, "--store", b, "--cwd-map", "/cli=/home/b")
	if code != exitOK || !strings.Contains(out, "1 pulled") {
		t.Fatalf("pull: exit %d\n%s%s", code, out, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(b, "sessions", "--home-b-proj--", "*.jsonl")); len(m) != 1 {
		t.Fatalf("pull restored %v", m)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", b)
	if code != exitOK || !strings.Contains(out, "1 in sync") {
		t.Fatalf("status after pull: exit %d\n%s%s", code, out, errOut)
	}
}
