package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/replica"
)

// TestStdoutOnTerminal checks that the standard output main builds for a
// terminal escapes what a command prints, and leaves it alone otherwise.
func TestStdoutOnTerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		p := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		s := newStdout(f, tty)
		if _, err := s.Write([]byte("title \x1b]0;pwned\x07 end\n\xc2")); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, _ := os.ReadFile(p)
		want := "title \x1b]0;pwned\x07 end\n\xc2"
		if tty {
			want = `title \u001b]0;pwned\u0007 end` + "\n\xc2"
		}
		if string(got) != want {
			t.Errorf("tty=%v: wrote %q, want %q", tty, got, want)
		}
	}
}

// TestPathsInLineOutput checks that a file name with a newline and an
// escape sequence is printed quoted on one line by the commands whose
// output is line-oriented.
func TestPathsInLineOutput(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold control characters")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "evil\ndir"), 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "evil\ndir", "evil\n\x1b[2Jname.jsonl")
	data := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p\nq"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(src, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	quoted := human.QuotePath(src)
	cases := []struct {
		args []string
		want []string // lines the output must have
	}{
		{[]string{"show", src}, []string{"File     " + quoted, `Cwd      "/p\nq"`}},
		{[]string{"stats", src}, []string{"File     " + quoted}},
	}
	for _, tc := range cases {
		out, errOut, code := runCLI(t, tc.args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.args[0], code, errOut)
		}
		lines := strings.Split(out, "\n")
		for _, w := range tc.want {
			if !slices.Contains(lines, w) {
				t.Errorf("%s: no line %q in:\n%s", tc.args[0], w, out)
			}
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s: the escape sequence reached the output", tc.args[0])
		}
	}
	// The fork goes into pi's store, here below a directory with a
	// newline.
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(dir, "evil\ndir", "agent"))
	out, errOut, code := runCLI(t, "fork", src)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, `  "`+dir+`/evil\ndir/`) {
		t.Errorf("fork: exit %d, stdout %q, stderr %q; want one line with the quoted path", code, out, errOut)
	}
}

// TestPathsQuotedEverywhere checks the commands that printed paths raw:
// a file name with a newline and an escape sequence comes out quoted on
// its line (human.QuotePath), never raw, from verify (of the file and of
// its directory), who, repair, migrate and delete.
func TestPathsQuotedEverywhere(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold control characters")
	}
	dir := filepath.Join(t.TempDir(), "evil\ndir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "evil\n\x1b[2Jname.jsonl")
	data := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(src, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	q := human.QuotePath(src)
	cases := []struct {
		args []string
		want []string // lines stdout must have
	}{
		{[]string{"verify", src}, []string{q + ": ok (version 3, 1 entry)"}},
		{[]string{"verify", dir}, []string{q + ": ok (version 3, 1 entry)"}},
		{[]string{"who", src}, []string{q + ": not locked"}},
		{[]string{"repair", src}, []string{q + ": nothing to repair; nothing written"}},
		{[]string{"migrate", src}, []string{q + ": v3, nothing to do"}},
		{[]string{"delete", src}, nil},
	}
	for _, tc := range cases {
		out, errOut, code := runCLI(t, tc.args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.args[0], code, errOut)
		}
		lines := strings.Split(out, "\n")
		for _, w := range tc.want {
			if !slices.Contains(lines, w) {
				t.Errorf("%s: no line %q in:\n%s", tc.args[0], w, out)
			}
		}
		if strings.Contains(out, "\x1b") || strings.Contains(out, "evil\n") || strings.Contains(out, `\x1b`) {
			t.Errorf("%s: a path was printed raw, or escaped another way:\n%q", tc.args[0], out)
		}
		switch tc.args[0] {
		case "delete":
			if want := "moved " + human.QuotePath(filepath.Base(src)) + ` to "`; !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
				t.Errorf("delete: %q, want one line starting %q", out, want)
			}
		}
	}
}

// TestSyncOutputQuotesPaths checks sync's lines for a session whose path
// and name hold a newline and an escape sequence.
func TestSyncOutputQuotesPaths(t *testing.T) {
	path := "/home/me/evil\ndir/s\x1b[2J.jsonl"
	rep := &replica.Report{Sessions: []replica.SessionReport{
		{Kind: "pi", Name: "evil\nname", Path: path, State: "pulled", Pulled: 2},
		{Kind: "pi", Name: "bad\x1bname", State: "failed", Err: errors.New("boom")},
	}}
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, name: "sync"}
	printSyncProblems(e, rep)
	printSyncText(e, "pull", rep, nil)
	want := "pulled       " + human.QuotePath(path) + " (2 down)\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("stdout %q, want it to start %q", out.String(), want)
	}
	if want := "sessctl: sync: pi " + human.QuotePath("bad\x1bname") + ": boom\n"; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if s := out.String() + errOut.String(); strings.Contains(s, "\x1b") || strings.Contains(s, "evil\n") {
		t.Errorf("raw control characters in %q", s)
	}
}

// TestOneEscape checks that a control character in a session (an escape
// sequence in its name, a label and a message) is shown one way, \u001b,
// by every command on a terminal: in text escaped there (list, show, a
// search in colour, which escapes its own) and in quoted names and labels
// (show, search, tree).
func TestOneEscape(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	dir := filepath.Join(t.TempDir(), "--p--")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const red = "\x1b[31mred"
	src := filepath.Join(dir, "2026-03-01T09-00-00-000Z_s1.jsonl")
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"find the \u001b[31mred marker","timestamp":1}}`,
		`{"type":"session_info","id":"a2","parentId":"a1","timestamp":"2026-03-01T09:00:02.000Z","name":"name \u001b[31mred"}`,
		`{"type":"label","id":"a3","parentId":"a2","timestamp":"2026-03-01T09:00:03.000Z","targetId":"a1","label":"label \u001b[31mred"}`,
	}
	if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	escaped := strings.ReplaceAll(red, "\x1b", `\u001b`)
	for _, tc := range []struct {
		tty  bool
		args []string
		want []string
	}{
		{true, []string{"list", "--dir", dir, "--no-index"}, []string{"name " + escaped}},
		{true, []string{"show", src}, []string{"find the " + escaped, `-- name "name ` + escaped + `"`}},
		{true, []string{"search", "marker", "--store", dir, "--no-index"}, []string{"find the " + escaped, `s1 "name ` + escaped + `"`}},
		{true, []string{"tree", src}, []string{`session s1 "name ` + escaped + `"`, `label a1: "label ` + escaped + `"`, `(label: "label ` + escaped + `")`}},
	} {
		p := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		stdout := newStdout(f, tc.tty)
		var errOut bytes.Buffer
		code := run(t.Context(), tc.args, strings.NewReader(""), stdout, &errOut)
		stdout.Flush()
		f.Close()
		b, _ := os.ReadFile(p)
		out := string(b)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.args[0], code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.args[0], w, out)
			}
		}
		plain := strings.NewReplacer(hlOn, "", hlOff, "").Replace(out)
		if strings.Contains(plain, "\x1b") || strings.Contains(plain, `\x1b`) {
			t.Errorf("%s: an escape sequence shown raw or as \\x1b:\n%q", tc.args[0], out)
		}
	}
}
