package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/render"
)

// TestCreateOutput checks that an export file appears whole on Commit and
// not at all on Abort, that an existing file is replaced only when asked,
// and that a session file, the source and a directory never are.
func TestCreateOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	source := filepath.Join(dir, "s.jsonl")
	header := `{"type":"session","version":3,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}` + "\n"
	other := filepath.Join(dir, "other.jsonl")
	for _, f := range []string{source, other} {
		if err := os.WriteFile(f, []byte(header), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.md")
	write := func(replace bool, commit bool) error {
		t.Helper()
		o, err := render.CreateOutput(out, source, replace)
		if err != nil {
			return err
		}
		if _, err := o.Write([]byte("doc\n")); err != nil {
			t.Fatal(err)
		}
		if !commit {
			o.Abort()
			return nil
		}
		return o.Commit()
	}
	if err := write(false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Abort: %v; want no file", err)
	}
	if err := write(false, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "doc\n" {
		t.Errorf("after Commit: %q", b)
	}
	if err := write(false, true); !errors.Is(err, render.ErrOutputExists) {
		t.Errorf("an existing file without replace: %v; want ErrOutputExists", err)
	}
	if err := write(true, true); err != nil {
		t.Errorf("an existing file with replace: %v", err)
	}
	for target, why := range map[string]string{
		source:                        "the session being exported",
		other:                         "a session file",
		dir:                           "a directory",
		filepath.Join(dir, "no", "x"): "does not exist",
	} {
		if _, err := render.CreateOutput(target, source, true); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CreateOutput(%s): %v; want an error saying %q", target, err, why)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
