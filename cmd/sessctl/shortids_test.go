package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// sameSecondSessions writes sessions created within one second in
// several cwds, as UUIDv7s drawn then are: their first eight hex digits
// are the same, and the first two share four more though their cwds
// differ. The last file is renamed to carry another id than its header.
// It returns the agent directory and the session files by id.
func sameSecondSessions(t *testing.T) (string, map[string]string) {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "agent")
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{AgentDir: agent})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, s := range []struct{ id, cwd string }{
		{"019c8d2a-1b3c-7a00-8000-000000000001", "/home/dev/a"},
		{"019c8d2a-1b3c-7b00-8000-000000000002", "/home/dev/b"},
		{"019c8d2a-1b9e-7c00-8000-000000000003", "/home/dev/a"},
		{"019c8d2a-1ba0-7d00-8000-000000000004", "/home/dev/c"},
	} {
		sess, err := st.Create(t.Context(), s.cwd, engine.CreateOptions{ID: s.id})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{
			`{"role":"user","content":"find the flaky test in ` + s.id + `","timestamp":1772355600000}`,
			`{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1772355601000}`,
		} {
			msg, err := message.Decode([]byte(m))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.AppendMessage(msg); err != nil {
				t.Fatal(err)
			}
		}
		files[s.id] = sess.SessionFile()
		sess.Close()
	}
	last := "019c8d2a-1ba0-7d00-8000-000000000004"
	renamed := filepath.Join(filepath.Dir(files[last]), "2026-03-01T09-00-00-000Z_11111111-0000-7000-8000-000000000009.jsonl")
	if err := os.Rename(files[last], renamed); err != nil {
		t.Fatal(err)
	}
	files[last] = renamed
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	return agent, files
}

// checkShortIDs checks that the short ids of out (one per line, after
// the session's full id in its text) are distinct, and that each names
// its session to show, tree and who.
func checkShortIDs(t *testing.T, what, out string, lineID *regexp.Regexp, files map[string]string) {
	t.Helper()
	seen := map[string]string{}
	for _, m := range lineID.FindAllStringSubmatch(out, -1) {
		short, id := m[1], m[2]
		if !strings.HasPrefix(id, short) {
			t.Errorf("%s: short id %s of %s is not its prefix", what, short, id)
		}
		if other, ok := seen[short]; ok && other != id {
			t.Errorf("%s: %s and %s both show as %s:\n%s", what, other, id, short, out)
		}
		seen[short] = id
		if got, errOut, code := runCLI(t, "show", short); code != exitOK || !strings.HasPrefix(got, "Session  "+id+"\n") {
			t.Errorf("%s: show %s = %d %q %s; want session %s", what, short, code, firstLine(got), errOut, id)
		}
		if got, errOut, code := runCLI(t, "tree", short); code != exitOK || !strings.HasPrefix(got, "session "+id+" ") {
			t.Errorf("%s: tree %s = %d %q %s; want session %s", what, short, code, firstLine(got), errOut, id)
		}
		if got, errOut, code := runCLI(t, "who", short); code != exitOK || !strings.HasPrefix(got, files[id]+": ") {
			t.Errorf("%s: who %s = %d %q %s; want %s", what, short, code, firstLine(got), errOut, files[id])
		}
	}
	if len(seen) == 0 {
		t.Fatalf("%s: no ids in\n%s", what, out)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestShortIDsUnique: list and search show each session by a prefix no
// other session of the store shares, which show, tree and who resolve,
// though the sessions were created within one second (their first eight
// hex digits are the same).
func TestShortIDsUnique(t *testing.T) {
	_, files := sameSecondSessions(t)
	row := regexp.MustCompile(`(?m)^\S+ \S+\s+\d+  (\S+)\s+find the flaky test in (\S+)$`)
	for _, args := range [][]string{{"list", "--all"}, {"list", "--cwd", "/home/dev/a"}, {"list", "--cwd", "/home/dev/c"}} {
		out, errOut, code := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
		checkShortIDs(t, strings.Join(args, " "), out, row, files)
	}
	out, errOut, code := runCLI(t, "search", "--index-dir", filepath.Join(t.TempDir(), "index"), "flaky")
	if code != exitOK {
		t.Fatalf("search: %d %s", code, errOut)
	}
	hit := regexp.MustCompile(`(?m)^.*\]  (\S+)  /home/dev/\S+\n    find the flaky test in (\S+)$`)
	checkShortIDs(t, "search", out, hit, files)
}

// TestShowHeaderIDPrefix: a session whose file name carries another id
// than its header is found by a prefix of the header's id.
func TestShowHeaderIDPrefix(t *testing.T) {
	_, files := sameSecondSessions(t)
	id := "019c8d2a-1ba0-7d00-8000-000000000004"
	for _, name := range []string{id, "019c8d2a-1ba", "019c8d2a1ba0"} {
		out, errOut, code := runCLI(t, "show", name)
		if code != exitOK || !strings.Contains(out, "File     "+files[id]+"\n") {
			t.Errorf("show %s = %d %q %s; want %s", name, code, out, errOut, files[id])
		}
	}
}
