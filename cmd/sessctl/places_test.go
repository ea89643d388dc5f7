package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
)

// bothFormats makes one directory holding a JSONL session (written by
// engine, cwd /home/dev/app) and an AgentUse project (written by
// engine/agentuse, <dir>/<hash>/session/<id>-helper, with a subagent),
// every one of them saying "quokka". It returns the directory, the JSONL
// session's id and file, and the AgentUse session's and subagent's ids.
func bothFormats(t *testing.T) (dir, piID, piFile, auID, subID string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(ctx, "/home/dev/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(rawMessage(`{"role":"user","content":"where is the quokka","timestamp":1}`))
	s.AppendMessage(rawMessage(`{"role":"assistant","content":[{"type":"text","text":"the quokka is here"}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	piID, piFile = s.SessionID(), s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(dir, "0123456789abcdef", "session")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	say := func(w *agentuse.Session, text string) {
		msg, err := w.AddMessage(agentuse.MessageSpec{Task: "find the quokka", User: text, ModelID: "p:m", Cwd: "/home/dev/app"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddPart(msg, agentuse.TextPart(text, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	w, err := st.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "helper", Name: "helper"}, Model: "p:m", Project: agentuse.Project{Root: "/home/dev/app", Cwd: "/home/dev/app"}})
	if err != nil {
		t.Fatal(err)
	}
	say(w, "a quokka from AgentUse")
	sub, err := w.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "digger", Name: "digger", IsSubAgent: true}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	say(sub, "a quokka from the subagent")
	auID, subID = w.ID(), sub.ID()
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, piID, piFile, auID, subID
}

// TestStoreDirOneMeaning: --store DIR is the sessions of both formats
// below DIR for every command. list, search, stats, sync status (against
// a directory remote) and serve's list page each find the same two
// sessions (the JSONL one and the AgentUse one) in one directory holding
// both; before, list showed the JSONL session only and sync looked for
// DIR/sessions.
func TestStoreDirOneMeaning(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, piID, _, auID, _ := bothFormats(t)
	want := []string{auID, piID}
	slices.Sort(want)
	check := func(what string, got []string) {
		t.Helper()
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s found %v, want %v", what, got, want)
		}
	}

	// list --json: one array, the AgentUse session's element last.
	out, errOut, code := runCLI(t, "list", "--store", dir, "--json")
	var listed []struct{ ID string }
	if code != exitOK || json.Unmarshal([]byte(out), &listed) != nil {
		t.Fatalf("list --json: exit %d\n%s%s", code, out, errOut)
	}
	var ids []string
	for _, l := range listed {
		ids = append(ids, l.ID)
	}
	check("list --json", ids)
	// list's table: both sessions, by a prefix of their ids.
	out, errOut, code = runCLI(t, "list", "--store", dir)
	if code != exitOK || !strings.Contains(out, "where is the quokka") || !strings.Contains(out, "helper") {
		t.Errorf("list: exit %d\n%s%s", code, out, errOut)
	}
	ids = nil
	for _, id := range want {
		for _, n := range []int{8, 12} {
			if strings.Contains(out, "  "+id[:n]) {
				ids = append(ids, id)
			}
		}
	}
	check("list", ids)

	// search --json: hits in both.
	out, errOut, code = runCLI(t, "search", "--store", dir, "--index-dir", filepath.Join(t.TempDir(), "index"), "--json", "--limit", "0", "quokka")
	if code != exitOK {
		t.Fatalf("search: exit %d\n%s%s", code, out, errOut)
	}
	ids = nil
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var h struct {
			Session struct{ ID, Path string }
		}
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			t.Fatalf("search: %v in %q", err, line)
		}
		if h.Session.ID == auID || h.Session.ID == piID {
			ids = append(ids, h.Session.ID)
		} else if !strings.Contains(h.Session.Path, "subagent") {
			t.Errorf("search: a hit of another session: %+v", h)
		}
	}
	check("search", ids)

	// stats --all: the JSONL session's usage, the AgentUse sessions
	// counted beside it (the session and its subagent).
	out, errOut, code = runCLI(t, "stats", "--all", "--store", dir, "--json")
	var stats struct {
		Sessions int `json:"sessions"`
		AgentUse int `json:"agentUseSessions"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &stats) != nil || stats.Sessions != 1 || stats.AgentUse != 2 {
		t.Errorf("stats --all: exit %d, %+v\n%s%s", code, stats, out, errOut)
	}

	// sync status against a directory remote: both, as new local.
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.MkdirAll(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "sync", "status", "--remote", remote, "--store", dir, "--json")
	var rep struct {
		Sessions []struct{ Kind, Name, Path, State string }
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("sync status: exit %d\n%s%s", code, out, errOut)
	}
	ids = nil
	for _, s := range rep.Sessions {
		for _, id := range want {
			if strings.Contains(s.Name, id) {
				ids = append(ids, id)
			}
		}
	}
	check("sync status", ids)

	// serve: the list page links to both.
	url, c, _ := startServe(t, "--store", dir)
	var page string
	for range 100 {
		if _, page = getBody(t, c, url); strings.Count(page, `<td class="when"`) >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ids = nil
	for _, m := range regexp.MustCompile(`href="[^"]*/(?:s|a)/[^"]+"`).FindAllString(page, -1) {
		for _, id := range want {
			if strings.Contains(m, id) {
				ids = append(ids, id)
			}
		}
	}
	check("serve", ids)
}

// TestListAllCwdAndChildren: list --all shows each session's cwd and
// marks a fork under the session it was forked from, as the web list
// does.
func TestListAllCwdAndChildren(t *testing.T) {
	agent := filepath.Join(t.TempDir(), "agent")
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	ctx := context.Background()
	st := openStore(t, engine.StoreOptions{AgentDir: agent})
	var files []string
	for i, cwd := range []string{"/home/dev/one", "/home/dev/two"} {
		s, err := st.Create(ctx, cwd, engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.AppendMessage(rawMessage(`{"role":"user","content":"question ` + string(rune('a'+i)) + `","timestamp":1}`))
		s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
		files = append(files, s.SessionFile())
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "fork", "--all", files[0])
	if code != exitOK {
		t.Fatalf("fork: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "list", "--all")
	if code != exitOK {
		t.Fatalf("list --all: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	at := func(s string) int {
		return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, s) })
	}
	one, two := at("cwd: /home/dev/one"), at("cwd: /home/dev/two")
	if one < 0 || two < 0 {
		t.Fatalf("list --all names no cwd:\n%s", out)
	}
	// Under /home/dev/one: the session, then its fork marked as a child.
	var group []string
	for _, l := range lines[one+1:] {
		if strings.HasPrefix(l, "cwd: ") || strings.HasPrefix(l, "↳ ") {
			break
		}
		group = append(group, l)
	}
	if len(group) != 2 || strings.Contains(group[0], "↳") || !strings.Contains(group[1], "↳") ||
		!strings.Contains(group[0], "question a") || !strings.Contains(group[1], "question a") {
		t.Errorf("the group of /home/dev/one is not the session then its fork marked ↳:\n%s", out)
	}
	if !strings.Contains(out, "↳ forked from, or a child of, the session above it") {
		t.Errorf("no legend for ↳:\n%s", out)
	}
}

// TestAgentUseStoreDirReached: list --store DIR and tree DIR reach an
// AgentUse store the library just wrote (AgentUse's sessions directly in
// DIR); before, list said "no sessions" and tree "is a directory".
func TestAgentUseStoreDirReached(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "helper", Name: "helper"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := w.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "digger", Name: "digger", IsSubAgent: true}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	id, subID := w.ID(), sub.ID()
	sub.Close()
	w.Close()
	out, errOut, code := runCLI(t, "list", "--store", dir)
	if code != exitOK || !strings.Contains(out, id[:12]) || !strings.Contains(out, "helper") {
		t.Errorf("list --store DIR: exit %d\n%s%s", code, out, errOut)
	}
	for _, arg := range []string{dir, w.Dir()} {
		out, errOut, code = runCLI(t, "tree", arg)
		want := "session " + id + "  helper"
		if code != exitOK || !strings.HasPrefix(out, want) || !strings.Contains(out, "└─ session "+subID+"  digger") {
			t.Errorf("tree %s: exit %d, want %q then its subagent\n%s%s", arg, code, want, out, errOut)
		}
	}
}

// TestStoreUnknownName: a bare word that is no store name is a usage
// error naming it, for every command that takes --store, not a
// directory of that name looked for.
func TestStoreUnknownName(t *testing.T) {
	for _, args := range [][]string{
		{"list", "--store", "pii"},
		{"search", "--store", "pii", "x"},
		{"show", "--store", "pii", "0123abcd"},
		{"stats", "--all", "--store", "pii"},
		{"sync", "status", "--remote", t.TempDir(), "--store", "pii"},
		{"serve", "--store", "pii"},
	} {
		_, errOut, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, `unknown store name "pii"`) {
			t.Errorf("%v: exit %d, want %d and the unknown name\n%s", args, code, exitUsage, errOut)
		}
	}
}

// TestSyncStoreDirRoundTrip: sync push --store DIR uploads both formats
// below DIR, and a pull into another directory restores them there: the
// JSONL session in the directory of its cwd, the AgentUse session in its
// project's session directory.
func TestSyncStoreDirRoundTrip(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, _, piFile, auID, _ := bothFormats(t)
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.MkdirAll(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", dir); code != exitOK || !strings.Contains(out, "2 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	other := t.TempDir()
	if out, errOut, code := runCLI(t, "sync", "pull", "--remote", remote, "--store", other); code != exitOK || !strings.Contains(out, "2 pulled") {
		t.Fatalf("pull: exit %d\n%s%s", code, out, errOut)
	}
	want := []string{
		filepath.Join(other, "--home-dev-app--", filepath.Base(piFile)),
		filepath.Join(other, "0123456789abcdef", "session", auID+"-helper", "session.json"),
	}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("pull did not restore %s: %v", p, err)
		}
	}
	// Nothing is left to restore, and nothing to push back: both pulled
	// sessions are in sync.
	if out, errOut, code := runCLI(t, "sync", "status", "--remote", remote, "--store", other); code != exitOK || !strings.Contains(out, "2 in sync") || strings.Contains(out, "new remote") || strings.Contains(out, "push") {
		t.Errorf("status after pull: exit %d\n%s%s", code, out, errOut)
	}
}

// TestSyncPullOnlyItsKind: a pull with places of one format leaves the
// remote's sessions of the other alone: none is written relative to the
// working directory (it has no directory to go to) and none fails.
func TestSyncPullOnlyItsKind(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, _, _, _, _ := bothFormats(t)
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.MkdirAll(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", dir); code != exitOK || !strings.Contains(out, "2 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	work := t.TempDir()
	t.Chdir(work)
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "data"))
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(t.TempDir(), "agent"))
	for _, store := range []string{"agentuse", "pi"} {
		out, errOut, code := runCLI(t, "sync", "pull", "--remote", remote, "--store", store)
		if code != exitOK || !strings.Contains(out, "1 pulled") || strings.Contains(out, "failed") {
			t.Errorf("pull --store %s: exit %d, want one session pulled and none failed\n%s%s", store, code, out, errOut)
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("the pulls wrote into the working directory: %v", ents)
	}
}
