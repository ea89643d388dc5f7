//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

// auRawSession writes an AgentUse session directory by hand: session.json
// and one message per text, each with one text part.
func auRawSession(t *testing.T, dir, id, parent string, texts ...string) {
	t.Helper()
	w := func(p, data string) {
		t.Helper()
		noErr(t, os.MkdirAll(filepath.Dir(p), 0o700))
		noErr(t, os.WriteFile(p, []byte(data), 0o600))
	}
	w(filepath.Join(dir, "session.json"), auSessionJSON(id, parent))
	for i, text := range texts {
		msg := "msg_" + id + "_" + string(rune('a'+i))
		w(filepath.Join(dir, msg, "message.json"), `{"id":"`+msg+`","sessionID":"`+id+`","time":{"created":`+string(rune('1'+i))+`}}`)
		w(filepath.Join(dir, msg, "part", "prt_"+msg+".json"), `{"id":"prt_`+msg+`","messageID":"`+msg+`","sessionID":"`+id+`","type":"text","text":"`+text+`","time":{"start":1}}`)
	}
}

func auSessionJSON(id, parent string) string {
	p := ""
	if parent != "" {
		p = `"parentSessionID":"` + parent + `",`
	}
	return `{"id":"` + id + `",` + p + `"agent":{"id":"ag","name":"ag","isSubAgent":` + map[bool]string{true: "true", false: "false"}[parent != ""] + `},"model":"m:x","status":"completed","time":{"created":1,"updated":2}}`
}

// TestAgentUseSkipsAreReported: AgentUse content that is not read is
// reported, and one bad session costs only itself. A message directory
// that is a symbolic link is not shown, searched or synced, and each says
// so; a session.json that is a named pipe leaves its directory out of the
// listing, saying so; an over-deep subagent chain (a directory no one can
// read by its path) no longer makes list, show and dump fail for every
// session of the project.
func TestAgentUseSkipsAreReported(t *testing.T) {
	project, err := filepath.EvalSymlinks(t.TempDir())
	noErr(t, err)
	if _, err := layout.GitShowTopLevel(context.Background(), project); err == nil {
		t.Skip("the temporary directory is inside a git work tree")
	}
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	root := layout.AgentUseSessionRoot(data, layout.AgentUseProjectHash(project))
	const (
		idA = "01M7ZXJ0KC9S183XADC88B6A01"
		idB = "01M7ZXJ0KC9S183XADC88B6B01"
		idC = "01M7ZXJ0KC9S183XADC88B6C01"
		idD = "01M7ZXJ0KC9S183XADC88B6D01"
	)
	dirA := filepath.Join(root, idA+"-ag")
	auRawSession(t, dirA, idA, "", "alpha shown", "alpha linked")
	// A's second message lives elsewhere, behind a symbolic link.
	linked := filepath.Join(dirA, "msg_"+idA+"_b")
	moved := filepath.Join(t.TempDir(), "moved")
	noErr(t, os.Rename(linked, moved))
	noErr(t, os.Symlink(moved, linked))

	dirB := filepath.Join(root, idB+"-ag")
	auRawSession(t, dirB, idB, "", "beta words")
	pipe := filepath.Join(dirB, "session.json")
	noErr(t, os.Remove(pipe))
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}

	dirC := filepath.Join(root, idC+"-ag")
	auRawSession(t, dirC, idC, "", "gamma words")
	parent := idC
	deep := testenv.DeepChain(t, dirC, func(i int) string {
		return "subagent/" + subID(i) + "-" + strings.Repeat("s", 180)
	}, func(r *os.Root, i int) {
		_ = r.WriteFile("session.json", []byte(auSessionJSON(subID(i), parent)), 0o600) // too long a path near the end
		parent = subID(i)
	})

	dirD := filepath.Join(root, idD+"-ag")
	auRawSession(t, dirD, idD, "", "delta words")

	cases := []struct {
		args        []string
		code        int
		out, notOut string
		err1, err2  string // substrings of stderr
		notErrAtAll bool
	}{
		{args: []string{"list", "--agentuse", "--project", project, "--json"}, code: exitFailure,
			out: idA, notOut: idB, err1: pipe + ": not a regular file", err2: deep},
		{args: []string{"show", "--store", "agentuse", "--project", project, idA}, code: exitFailure,
			out: "alpha shown", notOut: "alpha linked", err1: linked + ": a symbolic link, not followed"},
		{args: []string{"dump", "--store", "agentuse", "--project", project, idA}, code: exitFailure,
			out: `"skipped"`, notOut: "alpha linked", err1: linked + ": a symbolic link, not followed"},
		{args: []string{"show", "--store", "agentuse", "--project", project, idD}, code: exitOK, out: "delta words", notErrAtAll: true},
		{args: []string{"dump", "--store", "agentuse", "--project", project, idC}, code: exitOK, out: "gamma words", notErrAtAll: true},
		{args: []string{"search", "--no-index", "--store", "agentuse", "words"}, code: exitFailure,
			out: "delta words", err1: pipe + ": not a regular file", err2: deep},
		{args: []string{"search", "--no-index", "--store", "agentuse", "alpha"}, code: exitFailure,
			out: "alpha shown", notOut: "alpha linked", err1: linked + ": a symbolic link, not followed"},
	}
	for _, c := range cases {
		out, errOut, code := runAU(t, c.args...)
		name := strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, c.code, errOut)
		}
		if !strings.Contains(out, c.out) || (c.notOut != "" && strings.Contains(out, c.notOut)) {
			t.Errorf("%s: stdout %q, want %q in it and not %q", name, out, c.out, c.notOut)
		}
		for _, s := range []string{c.err1, c.err2} {
			if !strings.Contains(errOut, s) {
				t.Errorf("%s: stderr %q, want %q in it", name, errOut, s)
			}
		}
		if c.notErrAtAll && errOut != "" {
			t.Errorf("%s: stderr %q, want none", name, errOut)
		}
	}
}

// subID is the id of the i-th subagent session of a chain.
func subID(i int) string {
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	return "01M7ZXJ0KC9S183XADC88B7" + string(digits[i/1024%32]) + string(digits[i/32%32]) + string(digits[i%32])
}
