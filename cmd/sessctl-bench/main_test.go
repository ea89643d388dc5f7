package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/message"
)

func runBench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), &out, args)
	return out.String(), err
}

// TestGen: the generated session is the workload's bytes for its seed, a
// session sessctl opens with every entry; a store has the sessions asked
// for; nothing is written over a session's own files.
func TestGen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "g.jsonl")
	out, err := runBench(t, "gen", "session", "--entries", "200", "--seed", "4", path)
	if err != nil || !strings.HasPrefix(out, path+": 200 entries, ") {
		t.Fatalf("gen session: %q, %v", out, err)
	}
	var want bytes.Buffer
	if _, err := workload.Write(&want, workload.Options{Seed: 4, Entries: 200}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("gen session wrote %d bytes, the workload is %d (%v)", len(got), want.Len(), err)
	}
	if out, err := runBench(t, "resume", path); err != nil || out != "200 entries\n" {
		t.Fatalf("resume: %q, %v", out, err)
	}

	store := filepath.Join(dir, "store")
	if _, err := runBench(t, "gen", "dir", "--sessions", "7", "--size", "3000", store); err != nil {
		t.Fatal(err)
	}
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: store})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.List(context.Background(), "", engine.ListOptions{NoIndex: true})
	if err != nil || len(infos) != 7 {
		t.Fatalf("gen dir: %d sessions listed, want 7 (%v)", len(infos), err)
	}

	lock := path + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runBench(t, "gen", "session", "--entries", "3", lock); err == nil {
		t.Fatal("gen session wrote over a session's lock file")
	}
	if b, _ := os.ReadFile(lock); len(b) != 0 {
		t.Fatalf("the lock file holds %d bytes", len(b))
	}
}

// TestAppend: append creates one session holding the messages appended.
func TestAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := runBench(t, "append", "10", dir)
	if err != nil || !strings.HasPrefix(out, "10 entries in ") {
		t.Fatalf("append: %q, %v", out, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files, want 1", len(files))
	}
	s, err := engine.OpenFile(context.Background(), files[0], engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(s.Context().Messages); n != 10 {
		t.Fatalf("context has %d messages, want 10", n)
	}
}

// TestUsage: a command line not understood is a usage error.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"gen"}, {"gen", "nope", "x"}, {"gen", "session"}, {"append", "x", "d"}, {"frob", "x"}} {
		if _, err := runBench(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestRecent: recent opens the newest session of a cwd in pi's store.
func TestRecent(t *testing.T) {
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 2 {
		s, err := st.Create(ctx, "/work/p", engine.CreateOptions{WriteAtOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(message.NewUser("hello", time.UnixMilli(int64(1772355600000+i)))); err != nil {
			t.Fatal(err)
		}
		last = s.SessionFile()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(time.Duration(i-2) * time.Hour)
		if err := os.Chtimes(last, old, old); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runBench(t, "recent", "/work/p")
	if err != nil || !strings.HasPrefix(out, last+": ") || !strings.HasSuffix(out, " ms\n") {
		t.Fatalf("recent: %q, %v; want %s", out, err, last)
	}
}

// TestPutGet: put copies a file into an object of the S3 server the
// AWS_* variables name (real MinIO), in parts, byte for byte; get reads
// it back and counts its bytes; a key without a bucket is a usage error.
func TestPutGet(t *testing.T) {
	srv := testenv.NewMinIO(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if _, err := runBench(t, "mkbucket", "floor"); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16+3) // more than one 16 MiB part
	file := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runBench(t, "put", "floor/a/big", file)
	if err != nil || !strings.HasPrefix(out, fmt.Sprintf("put %d bytes in ", len(data))) {
		t.Fatalf("put: %q, %v", out, err)
	}
	mc, err := s3Client()
	if err != nil {
		t.Fatal(err)
	}
	obj, err := mc.GetObject(context.Background(), "floor", "a/big", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the object holds %d bytes (%v), want the file's %d", len(got), err, len(data))
	}
	out, err = runBench(t, "get", "floor/a/big")
	if err != nil || !strings.HasPrefix(out, fmt.Sprintf("get %d bytes in ", len(data))) {
		t.Fatalf("get: %q, %v", out, err)
	}
	for _, args := range [][]string{{"put", "floor", file}, {"get", "/k"}, {"get", "floor/k", "x"}, {"put", "floor/k"}} {
		if _, err := runBench(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
