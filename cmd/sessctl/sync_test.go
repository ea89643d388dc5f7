package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/replica"
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
	s, err := openStore(t, engine.StoreOptions{AgentDir: a}).Create(context.Background(), "/cli/proj", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(rawMessage(`{"role":"user","content":"hi","timestamp":1}`))
	s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	s.Close()
	remote := "s3://cli-sync/me"
	out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", filepath.Join(a, "sessions"))
	if code != exitOK || !strings.Contains(out, "1 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", filepath.Join(b, "sessions"), "--json")
	var st struct {
		Sessions []struct{ State string }
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || len(st.Sessions) != 1 || st.Sessions[0].State != "new remote" {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "sync", "pull", "--remote", remote, "--store", filepath.Join(b, "sessions"), "--cwd-map", "/cli=/home/b")
	if code != exitOK || !strings.Contains(out, "1 pulled") {
		t.Fatalf("pull: exit %d\n%s%s", code, out, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(b, "sessions", "--home-b-proj--", "*.jsonl")); len(m) != 1 {
		t.Fatalf("pull restored %v", m)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", filepath.Join(b, "sessions"))
	if code != exitOK || !strings.Contains(out, "1 in sync") {
		t.Fatalf("status after pull: exit %d\n%s%s", code, out, errOut)
	}
	// A session only the store has: pull --json says what status says.
	s, err = openStore(t, engine.StoreOptions{AgentDir: b}).Create(context.Background(), "/cli/only-here", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(rawMessage(`{"role":"user","content":"hi","timestamp":1}`))
	s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	s.Close()
	words := map[string]map[string]string{}
	for _, verb := range []string{"status", "pull"} {
		out, errOut, code = runCLI(t, "sync", verb, "--remote", remote, "--store", filepath.Join(b, "sessions"), "--json")
		var rep struct {
			Sessions []struct{ Name, State string }
		}
		if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("%s --json: exit %d\n%s%s", verb, code, out, errOut)
		}
		words[verb] = map[string]string{}
		for _, x := range rep.Sessions {
			words[verb][x.Name] = x.State
		}
	}
	name := filepath.Base(s.SessionFile())
	if words["status"][name] != "new local" || words["pull"][name] != "new local" {
		t.Errorf("a session only the store has: status says %q, pull --json %q; want \"new local\"", words["status"][name], words["pull"][name])
	}
}

// syncServer points the AWS_* variables and the cache at a fresh bucket
// of the real server, and returns a client and the bucket.
func syncServer(t *testing.T, bucket string) *minio.Client {
	t.Helper()
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
	if err := c.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// sync pull of a remote copy holding lines that are not complete entry
// lines (checksums correct) restores the complete entry lines only, says
// on stderr which it refused and exits 4; the file ends with a newline.
func TestSyncPullRefusesIncompleteLines(t *testing.T) {
	c := syncServer(t, "cli-refuse")
	ctx := context.Background()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	s, err := openStore(t, engine.StoreOptions{AgentDir: a}).Create(ctx, "/cli/refuse", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(rawMessage(`{"role":"user","content":"hi","timestamp":1}`))
	s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	path := s.SessionFile()
	s.Close()
	remote := "s3://cli-refuse/me"
	if out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", filepath.Join(a, "sessions")); code != exitOK {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	// Another writer publishes a generation whose new segment holds a
	// line that is not JSON and ends in a line without its newline.
	own, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seg := []byte("not json\n" + `{"type":"custom","customType":"n","data":{},"id":"e1000001","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}` + "\n" +
		`{"type":"custom","customType":"n","data":{},"id":"e2000002","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}`)
	m := replica.Manifest{Format: replica.FormatVersion, Kind: replica.KindPi, Name: filepath.Base(path), Gen: 2}
	for _, d := range [][]byte{own, seg} {
		h := sha256.Sum256(d)
		sum := hex.EncodeToString(h[:])
		if _, err := c.PutObject(ctx, "cli-refuse", "me/d/"+sum, bytes.NewReader(d), int64(len(d)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		m.Segments = append(m.Segments, replica.Segment{Object: "d/" + sum, SHA256: sum, Size: int64(len(d)), Plain: int64(len(d))})
		m.Size += int64(len(d))
	}
	data, _ := json.Marshal(m)
	if _, err := c.PutObject(ctx, "cli-refuse", fmt.Sprintf("me/m/pi/%s/%010d", m.Name, 2), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(seg)
	obj := "d/" + hex.EncodeToString(h[:])
	out, errOut, code := runCLI(t, "sync", "pull", "--remote", remote, "--store", filepath.Join(b, "sessions"), "--json")
	if code != exitCorrupt || !strings.Contains(errOut, "refused remote line 1 of "+obj) || !strings.Contains(errOut, "refused remote line 3 of "+obj) || !strings.Contains(errOut, "hint: 2 remote lines were left out") {
		t.Errorf("pull: exit %d, want %d\n%s", code, exitCorrupt, errOut)
	}
	var rep struct {
		Sessions []struct {
			Refused []struct {
				Object string
				Line   int
				Reason string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Sessions) != 1 || len(rep.Sessions[0].Refused) != 2 || rep.Sessions[0].Refused[1].Line != 3 || rep.Sessions[0].Refused[1].Object != obj {
		t.Errorf("pull --json: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(b, "sessions", filepath.Base(filepath.Dir(path)), m.Name))
	if err != nil {
		t.Fatal(err)
	}
	if want := string(own) + `{"type":"custom","customType":"n","data":{},"id":"e1000001","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}` + "\n"; string(got) != want {
		t.Errorf("restored:\n%s\nwant:\n%s", got, want)
	}
}

// A session that fails is counted once in the hint ("1 session failed").
func TestSyncFailedHint(t *testing.T) {
	syncServer(t, "cli-failed")
	a := filepath.Join(t.TempDir(), "a")
	dir := filepath.Join(a, "sessions", "--cli-failed--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A header that is not the session its file name says: never pushed.
	name := "2026-03-01T09-00-00-000Z_0e9e0e9e-0000-4000-8000-000000000001.jsonl"
	hdr := `{"type":"session","version":3,"id":"0e9e0e9e-0000-4000-8000-000000000002","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/cli/failed"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(hdr), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "sync", "push", "--remote", "s3://cli-failed/me", "--store", filepath.Join(a, "sessions"))
	if code != exitFailure || !strings.Contains(errOut, "hint: 1 session failed;") {
		t.Errorf("push: exit %d, want %d\n%s", code, exitFailure, errOut)
	}
}

// sync with a directory remote (a file:// URL or a path) needs no
// server: a session pushed from one agent directory is pulled into
// another, and status then says it is in sync. A directory that does not
// exist is not created: the push fails with a hint.
func TestSyncDirectoryRemote(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.Mkdir(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(t, engine.StoreOptions{AgentDir: a}).Create(context.Background(), "/cli/dir", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(rawMessage(`{"role":"user","content":"hi","timestamp":1}`))
	s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	s.Close()
	out, errOut, code := runCLI(t, "sync", "push", "--remote", (&url.URL{Scheme: "file", Path: "/" + strings.TrimPrefix(filepath.ToSlash(remote), "/")}).String(), "--store", filepath.Join(a, "sessions"))
	if code != exitOK || !strings.Contains(out, "1 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "sync", "pull", "--remote", remote, "--store", filepath.Join(b, "sessions"))
	if code != exitOK || !strings.Contains(out, "1 pulled") {
		t.Fatalf("pull: exit %d\n%s%s", code, out, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(b, "sessions", "--cli-dir--", "*.jsonl")); len(m) != 1 {
		t.Fatalf("pull restored %v", m)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", filepath.Join(b, "sessions"))
	if code != exitOK || !strings.Contains(out, "1 in sync") {
		t.Fatalf("status after pull: exit %d\n%s%s", code, out, errOut)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	_, errOut, code = runCLI(t, "sync", "push", "--remote", missing, "--store", filepath.Join(a, "sessions"))
	if code != exitFailure || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "hint: create the bucket (or the directory) first") {
		t.Errorf("push to a missing directory: exit %d, want %d\n%s", code, exitFailure, errOut)
	}
	if _, err := os.Lstat(missing); err == nil {
		t.Error("the push created the missing directory")
	}
}

// The fleet commands on a directory remote: status --json counts
// requests by kind and reports the replicators of the store; delete
// removes a session from the remote (exit 5 for one it does not have);
// prune --older-than applies retention (a dry run first); list --remote
// and show --remote read the remote without a local store.
func TestSyncFleetCommands(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.Mkdir(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(t.TempDir(), "a")
	var names, paths []string
	for i, text := range []string{"first fleet question", "second fleet question"} {
		s, err := openStore(t, engine.StoreOptions{AgentDir: a}).Create(ctx, fmt.Sprintf("/fleet/%d", i), engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.AppendMessage(rawMessage(`{"role":"user","content":"` + text + `","timestamp":1}`))
		s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
		s.AppendSessionInfo(fmt.Sprintf("fleet %d", i))
		names = append(names, filepath.Base(s.SessionFile()))
		paths = append(paths, s.SessionFile())
		s.Close()
	}
	if out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", filepath.Join(a, "sessions")); code != exitOK || !strings.Contains(out, "2 pushed") || !strings.Contains(out, "PUT") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}

	// A replicator of this store and remote on this machine.
	cache, _ := os.UserCacheDir()
	places, err := layout.ResolvePlaces(filepath.Join(a, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := replica.Open(replica.Options{Remote: remote, Places: places, StateDir: filepath.Join(cache, "sessctl", "sync")})
	if err != nil {
		t.Fatal(err)
	}
	x := replica.NewReplicator(rr, replica.ReplicatorOptions{})
	s, err := openStore(t, engine.StoreOptions{AgentDir: a, Replicator: x}).Open(ctx, paths[0], engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendSessionInfo("fleet renamed")
	s.Close()
	x.Close()
	out, errOut, code := runCLI(t, "sync", "status", "--remote", remote, "--store", filepath.Join(a, "sessions"), "--json")
	var st struct {
		RequestKinds struct{ List int64 } `json:"requestKinds"`
		Replicators  []struct {
			PID      int
			Closed   bool
			Requests struct{ Put int64 }
		}
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.RequestKinds.List == 0 || len(st.Replicators) != 1 ||
		st.Replicators[0].PID != os.Getpid() || !st.Replicators[0].Closed || st.Replicators[0].Requests.Put == 0 {
		t.Fatalf("status --json: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, _ := runCLI(t, "sync", "status", "--remote", remote, "--store", filepath.Join(a, "sessions")); !strings.Contains(out, fmt.Sprintf("replicator pid %d", os.Getpid())) {
		t.Errorf("status does not name the replicator:\n%s", out)
	}

	// list --remote and show --remote: no local store involved.
	out, errOut, code = runCLI(t, "list", "--remote", remote, "--json")
	var rows []struct {
		Path, Cwd, Name, FirstMessage string
		MessageCount                  int
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 {
		t.Fatalf("list --remote --json: exit %d\n%s%s", code, out, errOut)
	}
	found := map[string]bool{}
	for _, r := range rows {
		found[r.FirstMessage+"|"+r.Name+"|"+r.Cwd] = r.MessageCount == 2
	}
	if !found["first fleet question|fleet renamed|/fleet/0"] || !found["second fleet question|fleet 1|/fleet/1"] {
		t.Errorf("list --remote rows: %+v", rows)
	}
	if out, errOut, code := runCLI(t, "list", "--remote", remote); code != exitOK || !strings.Contains(out, "fleet renamed") {
		t.Errorf("list --remote: exit %d\n%s%s", code, out, errOut)
	}
	id1 := strings.TrimSuffix(names[1][strings.IndexByte(names[1], '_')+1:], ".jsonl")
	out, errOut, code = runCLI(t, "show", "--remote", remote, id1[:24])
	if code != exitOK || !strings.Contains(out, "second fleet question") {
		t.Errorf("show --remote: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := runCLI(t, "show", "--remote", remote, "ffffffffffff"); code != exitNotFound {
		t.Errorf("show --remote of an unknown session: exit %d, want %d", code, exitNotFound)
	}

	// delete and prune.
	if _, errOut, code := runCLI(t, "sync", "delete", "--remote", remote, "--store", filepath.Join(a, "sessions"), "no-such-session"); code != exitNotFound || !strings.Contains(errOut, "hint:") {
		t.Errorf("delete of an unknown session: exit %d\n%s", code, errOut)
	}
	if out, errOut, code := runCLI(t, "sync", "delete", "--remote", remote, "--store", filepath.Join(a, "sessions"), names[1]); code != exitOK || !strings.Contains(out, "deleted") {
		t.Errorf("delete: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := runCLI(t, "list", "--remote", remote, "--json"); code != exitOK || strings.Contains(out, "second fleet question") {
		t.Errorf("list --remote after delete: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI(t, "sync", "prune", "--remote", remote, "--older-than", "ninety days"); code != exitUsage {
		t.Errorf("prune --older-than with a bad age: exit %d, want %d", code, exitUsage)
	}
	if _, _, code := runCLI(t, "sync", "push", "--remote", remote, "--older-than", "90d"); code != exitUsage {
		t.Errorf("push --older-than: exit %d, want %d", code, exitUsage)
	}
	out, errOut, code = runCLI(t, "sync", "prune", "--remote", remote, "--older-than", "90d", "--dry-run", "--json")
	var pr struct{ Sessions []struct{ State string } }
	if code != exitOK || json.Unmarshal([]byte(out), &pr) != nil || len(pr.Sessions) != 0 {
		t.Errorf("prune of young sessions: exit %d\n%s%s", code, out, errOut)
	}
}
