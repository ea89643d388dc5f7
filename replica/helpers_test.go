package replica_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
)

// buckets counts the buckets made, so that a benchmark run again gets a
// new one.
var buckets int

// remoteFor makes a fresh bucket on srv for the test and returns its
// s3:// URL (with a prefix, as users will have one).
func remoteFor(t testing.TB, srv *testenv.MinIOServer) string {
	t.Helper()
	c := client(t, srv)
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

func s3conf(srv *testenv.MinIOServer) replica.S3Config {
	return replica.EnvS3Config(func(k string) (string, bool) {
		for _, kv := range srv.Env() {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v, true
			}
		}
		return "", false
	})
}

// machine is one local store: an agent directory and its sync state.
type machine struct {
	agentDir string
	opts     replica.Options
}

func newMachine(t testing.TB, srv *testenv.MinIOServer, remote string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{agentDir: filepath.Join(dir, "agent")}
	m.opts = replica.Options{Remote: remote, S3: s3conf(srv), AgentDir: m.agentDir, StateDir: filepath.Join(dir, "state"), Host: "m-" + filepath.Base(dir)}
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
