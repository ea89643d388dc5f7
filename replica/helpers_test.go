package replica_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// buckets counts the buckets made, so that a benchmark run again gets a
// new one.
var buckets int

// backend is where a test's remotes live: a directory (every run), or a
// bucket of the real MinIO server.
type backend struct {
	srv *testenv.MinIOServer // nil: a directory remote
}

// eachBackend runs f on a directory remote, and on the real MinIO server
// (skipped where it is not installed, failed under
// SESSCTL_REQUIRE_MINIO=1).
func eachBackend(t *testing.T, f func(t *testing.T, be *backend)) {
	t.Helper()
	t.Run("dir", func(t *testing.T) { f(t, &backend{}) })
	t.Run("s3", func(t *testing.T) { f(t, &backend{srv: testenv.MinIO(t)}) })
}

// s3be is the backend of a MinIO server.
func s3be(srv *testenv.MinIOServer) *backend { return &backend{srv: srv} }

func (be *backend) s3() bool { return be.srv != nil }

// remoteFor makes a new remote for the test and returns its URL: a fresh
// bucket on the server (with a prefix, as users will have one), or a
// new directory (as a file:// URL).
func remoteFor(t testing.TB, be *backend) string {
	t.Helper()
	if !be.s3() {
		dir := filepath.Join(t.TempDir(), "remote")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return fileURL(dir)
	}
	c := client(t, be.srv)
	buckets++
	h := sha256.Sum256([]byte(t.Name() + "\x00" + strconv.Itoa(buckets)))
	name := "t-" + hex.EncodeToString(h[:])[:20]
	if err := c.MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	return "s3://" + name + "/team/sessions"
}

func client(t testing.TB, srv *testenv.MinIOServer) *minio.Client {
	t.Helper()
	c, err := minio.New(srv.Addr, &minio.Options{Creds: credentials.NewStaticV4(srv.User, srv.Password, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// s3Backends are the Backends of a remote on the S3 server c reaches.
func s3Backends(c s3.Config) map[string]replica.Backend {
	return map[string]replica.Backend{s3.Scheme: s3.Backend(c)}
}

func s3conf(srv *testenv.MinIOServer) s3.Config {
	return s3.EnvConfig(func(k string) (string, bool) {
		for _, kv := range srv.Env() {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v, true
			}
		}
		return "", false
	})
}

// fileURL is the file:// URL of an absolute directory: file:///dir, or
// file:///C:/dir on Windows.
func fileURL(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return "file://" + p
}

// remoteDir is the directory of a directory remote's URL.
func remoteDir(remote string) string {
	p := strings.TrimPrefix(remote, "file://")
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p)
}

// The raw object access below goes around package replica (the MinIO
// client, or the files), to plant objects and to check what a run left.

// put writes an object of the remote as another writer would.
func (be *backend) put(t testing.TB, remote, key string, data []byte) {
	t.Helper()
	if !be.s3() {
		p := filepath.Join(remoteDir(remote), filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	bucket, prefix, err := s3.ParseURL(remote)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, be.srv).PutObject(context.Background(), bucket, prefix+key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get reads an object of the remote.
func (be *backend) get(t testing.TB, remote, key string) []byte {
	t.Helper()
	if !be.s3() {
		data, err := os.ReadFile(filepath.Join(remoteDir(remote), filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	bucket, prefix, _ := s3.ParseURL(remote)
	obj, err := client(t, be.srv).GetObject(context.Background(), bucket, prefix+key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return data
}

// keys lists the keys of the remote that start with prefix, sorted: the
// files of a directory remote but its own (lock and temporary) files.
func (be *backend) keys(t testing.TB, remote, prefix string) []string {
	t.Helper()
	var out []string
	if !be.s3() {
		root := remoteDir(remote)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				if k := filepath.ToSlash(rel); strings.HasPrefix(k, prefix) {
					out = append(out, k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(out)
		return out
	}
	bucket, pre, _ := s3.ParseURL(remote)
	for o := range client(t, be.srv).ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: pre + prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		out = append(out, strings.TrimPrefix(o.Key, pre))
	}
	return out
}

// machine is one local store: an agent directory and its sync state.
type machine struct {
	agentDir string
	opts     replica.Options
}

func newMachine(t testing.TB, be *backend, remote string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{agentDir: filepath.Join(dir, "agent")}
	m.opts = replica.Options{Remote: remote, AgentDir: m.agentDir, StateDir: filepath.Join(dir, "state"), Host: "m-" + filepath.Base(dir)}
	if be.s3() {
		m.opts.Backends = s3Backends(s3conf(be.srv))
	}
	return m
}

func (m *machine) remote(t testing.TB) *replica.Remote {
	t.Helper()
	r, err := replica.Open(m.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// run runs one operation and fails the test on an error or a failed
// session.
func (m *machine) run(t testing.TB, op string) *replica.Report {
	t.Helper()
	r := m.remote(t)
	var rep *replica.Report
	var err error
	ctx := context.Background()
	switch op {
	case "push":
		rep, err = r.Push(ctx)
	case "pull":
		rep, err = r.Pull(ctx)
	case "sync":
		rep, err = r.Sync(ctx)
	case "status":
		rep, err = r.Status(ctx)
	}
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	for _, s := range rep.Sessions {
		if s.Err != nil {
			t.Fatalf("%s: session %s: %v", op, s.Name, s.Err)
		}
	}
	return rep
}

var seq int

// newSession writes a session with n user/assistant pairs and returns its
// path.
func (m *machine) newSession(t testing.TB, cwd string, n int) string {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{AgentDir: m.agentDir, Sync: engine.SyncNone}).Create(context.Background(), cwd, engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	appendPairs(t, s, "first", n)
	return s.SessionFile()
}

func appendPairs(t testing.TB, s *engine.Session, tag string, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		seq++
		u := fmt.Sprintf(`{"role":"user","content":"%s question %d","timestamp":%d}`, tag, i, 1772355600000+seq)
		a := fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"%s answer %d"}],"provider":"p","model":"m","stopReason":"stop","timestamp":%d}`, tag, i, 1772355600000+seq)
		for _, msg := range []string{u, a} {
			m, err := message.Decode([]byte(msg))
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.AppendMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	return ids
}

// appendTo opens the session at path and appends n pairs.
func appendTo(t testing.TB, path, tag string, n int) []string {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return appendPairs(t, s, tag, n)
}

// entries returns the session's entry lines by id (failing on a
// duplicate id with other bytes), and its header line.
func entries(t testing.TB, path string) (map[string]string, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var header string
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		if e.IsHeader() {
			header = l
			continue
		}
		if prev, ok := out[e.ID]; ok && prev != l {
			t.Fatalf("%s: id %s twice with different bytes", path, e.ID)
		}
		out[e.ID] = l
	}
	return out, header
}

// sessionFiles lists the session files of an agent directory by name.
func sessionFiles(t testing.TB, agentDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	matches, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	for _, p := range matches {
		out[filepath.Base(p)] = p
	}
	return out
}

// checkParentsFirst fails unless every parent precedes its children.
func checkParentsFirst(t testing.TB, path string) {
	t.Helper()
	data, _ := os.ReadFile(path)
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil || e.IsHeader() {
			continue
		}
		if e.ParentKind == jsonl.KindString && !seen[e.ParentID] {
			t.Errorf("%s: entry %s comes before its parent %s", path, e.ID, e.ParentID)
		}
		seen[e.ID] = true
	}
}

// keys returns the keys of m, sorted.
func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// transferred returns what a report says was moved besides listings.
func moved(rep *replica.Report) int64 { return rep.Uploaded + rep.Downloaded }
