package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

func TestWriteWhole(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "s.jsonl")
	v1 := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	v2 := append(append([]byte(nil), v1...), `{"type":"custom","customType":"x","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}`+"\n"...)
	refuse := errors.New("refused")
	cases := []struct {
		name  string
		data  []byte
		check error
		want  engine.WriteResult
		err   error
		file  []byte
	}{
		{"create", v1, nil, engine.WriteCreated, nil, v1},
		{"same bytes", v1, refuse, engine.WriteUnchanged, nil, v1},
		{"replace", v2, nil, engine.WriteReplaced, nil, v2},
		{"check refuses", v1, refuse, engine.WriteUnchanged, refuse, v2},
	}
	for _, c := range cases {
		var seen []byte
		res, err := engine.WriteWhole(ctx, path, c.data, func(cur []byte) error { seen = cur; return c.check }, engine.Options{})
		if !errors.Is(err, c.err) || (err == nil && res != c.want) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, res, err, c.want, c.err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != string(c.file) {
			t.Errorf("%s: file %q", c.name, got)
		}
		if c.name == "replace" && string(seen) != string(v1) {
			t.Errorf("check saw %q", seen)
		}
	}
	for _, p := range []string{filepath.Dir(path), path} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: vfs.DirMode, false: vfs.FileMode}[st.IsDir()]; runtime.GOOS != "windows" && st.Mode().Perm() != want { // no modes on Windows
			t.Errorf("%s mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}

	// Another writer holds the session: nothing is written.
	s, err := engine.Open(ctx, path, engine.Options{Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.WriteWhole(ctx, path, v1, nil, engine.Options{}); !errors.Is(err, engine.ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A symbolic link is never written through.
	testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := engine.WriteWhole(ctx, link, v1, nil, engine.Options{}); !errors.Is(err, vfs.ErrSymlink) {
		t.Errorf("symlink: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(v2) {
		t.Errorf("written through the link: %q", got)
	}
}
