package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTermEscaper checks the escaping of control characters on a
// terminal, with input split at every byte, and that JSON stays valid.
func TestTermEscaper(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"red \x1b[31mRED\x1b[0m", `red \u001b[31mRED\u001b[0m`},
		{"nul\x00 bel\x07 cr\r del\x7f", `nul\u0000 bel\u0007 cr\u000d del\u007f`},
		{"csi \u009b2J and nel \u0085 but é and ¢", `csi \u009b2J and nel \u0085 but é and ¢`},
		{"ends in \xc2", "ends in \xc2"},
		{`{"text":"a` + "\u0085" + `b"}`, `{"text":"a\u0085b"}`},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 2, 3, 1 << 20} {
			var out bytes.Buffer
			esc := &termEscaper{w: &out}
			in := []byte(tc.in)
			for i := 0; i < len(in); i += step {
				chunk := in[i:min(i+step, len(in))]
				if n, err := esc.Write(chunk); err != nil || n != len(chunk) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := esc.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("escaping %q in writes of %d: %q, want %q", tc.in, step, out.String(), tc.want)
			}
		}
	}
	var v map[string]string
	var out bytes.Buffer
	esc := &termEscaper{w: &out}
	esc.Write([]byte(`{"a":"x` + "\u009b\x7f" + `y"}`))
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["a"] != "x\u009b\x7fy" {
		t.Errorf("escaped JSON %s reads as %q, %v", out.String(), v, err)
	}
}

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
	quoted := strconv.Quote(src)
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
	// The fork goes beside the source, into a directory with a newline.
	out, errOut, code := runCLI(t, "fork", src)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, `  "`+dir+`/evil\ndir/`) {
		t.Errorf("fork: exit %d, stdout %q, stderr %q; want one line with the quoted path", code, out, errOut)
	}
}
