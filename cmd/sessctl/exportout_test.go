package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestExportOutputTarget checks what export -o may replace: a new file
// or, with --force, an existing export; never the session itself,
// another session file, a directory, a link or a special file; and it
// creates no directories.
func TestExportOutputTarget(t *testing.T) {
	dir := t.TempDir()
	main := buildFixtures(t, filepath.Join(dir, "sessions"))
	other, err := filepath.Glob(filepath.Join(dir, "sessions", "*0b5e55ed*.jsonl"))
	if err != nil || len(other) != 1 {
		t.Fatalf("the second fixture session: %v %v", other, err)
	}
	out := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	symlink := func(target, name string) string {
		t.Helper()
		p := filepath.Join(out, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		target  func() string
		force   bool
		code    int
		wantErr string
	}{
		{name: "new file", target: func() string { return filepath.Join(out, "new.md") }},
		{name: "existing file", target: func() string { return write("old.md", "old export\n") },
			code: exitFailure, wantErr: "already exists; add --force to replace it"},
		{name: "existing file with --force", target: func() string { return write("old2.md", "old export\n") }, force: true},
		{name: "the session itself", target: func() string { return main }, force: true,
			code: exitFailure, wantErr: "it is the session being exported"},
		{name: "a hard link to the session", target: func() string {
			p := filepath.Join(out, "hard.md")
			if err := os.Link(main, p); err != nil {
				t.Skip(err)
			}
			return p
		}, force: true, code: exitFailure, wantErr: "it is the session being exported"},
		{name: "another session file", target: func() string { return other[0] }, force: true,
			code: exitFailure, wantErr: "it is a session file"},
		{name: "a session file under another name", target: func() string {
			return write("notes.txt", "\n"+`{"type":"session","version":3,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/"}`+"\n")
		}, force: true, code: exitFailure, wantErr: "it is a session file"},
		{name: "a directory", target: func() string { return t.TempDir() }, force: true,
			code: exitFailure, wantErr: "it is a directory"},
		{name: "a link to a file", target: func() string { return symlink(write("real.md", "x"), "link.md") }, force: true,
			code: exitFailure, wantErr: "it is a symbolic link"},
		{name: "a link to a device", target: func() string { return symlink(os.DevNull, "null.md") }, force: true,
			code: exitFailure, wantErr: "it is a symbolic link"},
		{name: "a missing directory", target: func() string { return filepath.Join(out, "no", "such", "x.md") },
			code: exitFailure, wantErr: "does not exist (sessctl does not create it)"},
	}
	tests = append(tests, specialTargets(t, out)...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "a link to") && runtime.GOOS == "windows" {
				// Skipped here, in the subtest: the target functions run
				// on the parent test, which a subtest must not skip.
				t.Skip("symbolic links need privileges on Windows")
			}
			target := tc.target()
			before, beforeErr := readRegular(target)
			args := []string{"export", "-o", target, main}
			if tc.force {
				args = append(args, "--force")
			}
			stdout, errOut, code := runCLI(t, args...)
			if code != tc.code || stdout != "" {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tc.code, stdout, errOut)
			}
			if tc.code != exitOK {
				if !strings.Contains(errOut, tc.wantErr) {
					t.Errorf("stderr %q lacks %q", errOut, tc.wantErr)
				}
				after, afterErr := readRegular(target)
				if string(after) != string(before) || (afterErr == nil) != (beforeErr == nil) {
					t.Errorf("the target changed")
				}
				if _, err := os.Stat(filepath.Join(out, "no")); err == nil {
					t.Errorf("export created a directory")
				}
			} else {
				fi, err := os.Lstat(target)
				if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
					t.Fatalf("the export: %v, %v", fi, err)
				}
				got, _ := os.ReadFile(target)
				if !strings.HasPrefix(string(got), "# fix CRLF parsing\n") {
					t.Errorf("the export holds %.60q", got)
				}
			}
			for _, d := range []string{out, filepath.Dir(main)} {
				tmps, _ := filepath.Glob(filepath.Join(d, "*.tmp-*"))
				if len(tmps) > 0 {
					t.Errorf("temporary files left behind: %v", tmps)
				}
			}
		})
	}
	if _, errOut, code := runCLI(t, "export", "--force", main); code != exitUsage {
		t.Errorf("--force without -o: exit %d, stderr %q", code, errOut)
	}
}

// readRegular reads path if it is a regular file (not through a link),
// and fails for anything else without opening it: a named pipe would
// block the test.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return []byte(fi.Mode().String()), nil
	}
	return os.ReadFile(path)
}

// TestExportJSONNoMessages checks the streamed JSON of a branch without
// messages: "messages" is an empty array, as indenting the whole object
// gives.
func TestExportJSONNoMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(vHeader)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "export", "--format", "json", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Messages []any `json:"messages"`
		Leaf     any   `json:"leaf"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Messages == nil || len(v.Messages) != 0 || v.Leaf != nil {
		t.Fatalf("export: %v, %+v\n%s", err, v, out)
	}
	if !strings.HasSuffix(out, "  \"leaf\": null,\n  \"messages\": []\n}\n") {
		t.Errorf("export ends %q", out[max(0, len(out)-60):])
	}
}
