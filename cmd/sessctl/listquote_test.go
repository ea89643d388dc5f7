package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestListQuotesNames: the list table, of a store and of a remote (whose
// names a hostile bucket writes), prints a name holding a newline or an
// escape sequence quoted, and a first message with an escape sequence
// quoted, so no raw ESC goes into a pipe and every session is one line
// (issue 39, item 12: the name was printed as it was, its newline folded,
// its ESC raw).
func TestListQuotesNames(t *testing.T) {
	home := t.TempDir()
	isolate(t, home)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "a")
	st := openStore(t, engine.StoreOptions{AgentDir: a})
	var named string
	const name = "evil\n\x1b[2Jname"
	for i, text := range []string{"plain question", "hi \x1b]0;pwned\x07 there"} {
		s, err := st.Create(ctx, "/quote", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(text)
		s.AppendMessage(rawMessage(`{"role":"user","content":` + string(q) + `,"timestamp":1}`))
		s.AppendMessage(rawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
		if i == 0 {
			named = s.SessionFile()
		}
		s.Close()
	}
	// The name as another program (pi before 1.6.0) may write it: raw,
	// its newline kept (AppendSessionInfo turns it into a space, as pi
	// 1.6.0).
	f, err := os.OpenFile(named, os.O_WRONLY|os.O_APPEND, 0)
	noErr(t, err)
	n, _ := json.Marshal(name)
	_, err = f.WriteString(`{"type":"session_info","id":"c0ffee01","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","name":` + string(n) + "}\n")
	noErr(t, err)
	noErr(t, f.Close())
	remote := filepath.Join(t.TempDir(), "remote")
	noErr(t, os.Mkdir(remote, 0o700))
	if out, errOut, code := runCLI(t, "sync", "push", "--remote", remote, "--store", a); code != exitOK {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"list", "--store", a},
		{"list", "--remote", remote},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%v: raw control characters in the table:\n%q", args, out)
		}
		if n := strings.Count(out, "\n"); n != 3 {
			t.Errorf("%v: %d lines, want a head and 2 sessions:\n%s", args, n, out)
		}
		for _, want := range []string{`"evil\n\u001b[2Jname"`, `"hi \u001b]0;pwned\u0007 there"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %s in the table:\n%s", args, want, out)
			}
		}
	}
	// The header of show and stats names it the same way.
	for _, cmd := range []string{"show", "stats"} {
		out, errOut, code := runCLI(t, cmd, named)
		if code != exitOK || strings.Contains(out, "\x1b") || !strings.Contains(out, "Name     "+`"evil\n\u001b[2Jname"`) {
			t.Errorf("%s: exit %d, want the name quoted:\n%s%s", cmd, code, out, errOut)
		}
	}
}
