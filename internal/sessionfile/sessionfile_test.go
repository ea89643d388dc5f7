package sessionfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

func TestIDFromFileName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"2026-03-01T09-00-00-123Z_390d8e15-aaaa.jsonl": "390d8e15-aaaa",
		"named.jsonl":  "",
		"a_b.jsonl":    "",
		"2026_x.jsonl": "",
	} {
		if got := sessionfile.IDFromFileName(name); got != want {
			t.Errorf("IDFromFileName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestTrashDir(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 123e6, time.UTC)
	root := t.TempDir()
	stamp := "2026-03-01T09-00-00-123Z"
	in := filepath.Join(root, "--p--", "s.jsonl")
	out := filepath.Join(t.TempDir(), "s.jsonl")
	for _, tc := range []struct{ root, path, want string }{
		{root, in, filepath.Join(root, ".trash", stamp, "--p--")},
		{root, out, filepath.Join(filepath.Dir(out), ".trash", stamp)},
		{"", in, filepath.Join(root, "--p--", ".trash", stamp)},
	} {
		if got := sessionfile.TrashDir(tc.root, tc.path, now); got != tc.want {
			t.Errorf("TrashDir(%q, %q) = %q, want %q", tc.root, tc.path, got, tc.want)
		}
	}
}

// TempFiles names sessctl's own temporary files of a session, and only
// those.
func TestTempFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	names := []string{
		"s.jsonl", "s.jsonl.tmp-0123456789abcdef", "s.jsonl.torn-1772355600000.tmp-fedcba9876543210",
		"s.jsonl.owner.tmp-00112233445566ff",
		// not ours, or not of this session
		"s.jsonl.tmp-0123", "s.jsonl.tmp-0123456789ABCDEF", "s.jsonl.tmp-0123456789abcdefX", "s.jsonl.lock",
		"s.jsonl.torn-x.tmp-0123456789abcdef", "t.jsonl.tmp-0123456789abcdef", "s.jsonl.v1.bak.tmp-0123456789abcdef",
		"s.jsonl.lock.excl.stale-12-0123456789abcdef", "xs.jsonl.tmp-0123456789abcdef",
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", p+".tmp-aaaaaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	got, err := sessionfile.TempFiles(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	want := []string{"s.jsonl.owner.tmp-00112233445566ff", "s.jsonl.tmp-0123456789abcdef", "s.jsonl.torn-1772355600000.tmp-fedcba9876543210"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TempFiles (-want +got):\n%s", diff)
	}
}

// CheckOutput judges names: a session's lock, owner record, backups,
// quarantined tails and temporary files are refused whether they exist
// or not, an existing *.jsonl is refused, and so is anything inside an
// AgentUse session directory; other names pass.
func TestCheckOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	au := filepath.Join(dir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4K-build")
	if err := os.MkdirAll(filepath.Join(au, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(au, "session.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	notAU := filepath.Join(dir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4M-other")
	if err := os.MkdirAll(notAU, 0o700); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(dir, "s.jsonl")
	refused := []string{
		s + ".lock", s + ".lock.excl", s + ".owner", s + ".v1.bak", s + ".v2.bak.3",
		s + ".torn-1772355600000", s + ".tmp-0123456789abcdef", s + ".owner.tmp-0123456789abcdef",
		s + ".torn-1772355600000.tmp-0123456789abcdef", existing,
		au, filepath.Join(au, "session.json"), filepath.Join(au, "sub", "new.md"),
	}
	for _, p := range refused {
		if err := sessionfile.CheckOutput(nil, p); !errors.Is(err, sessionfile.ErrSessionOwned) {
			t.Errorf("CheckOutput(%s) = %v, want ErrSessionOwned", p, err)
		}
	}
	allowed := []string{
		filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "export.md"), s + ".md",
		filepath.Join(dir, "x.lock"), s + ".torn-x", s + ".tmp-short", s + ".vx.bak",
		filepath.Join(notAU, "x.md"),
	}
	for _, p := range allowed {
		if err := sessionfile.CheckOutput(nil, p); err != nil {
			t.Errorf("CheckOutput(%s) = %v, want nil", p, err)
		}
	}
}

func TestWriteWhole(t *testing.T) {
	t.Parallel()
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
		want  sessionfile.WriteResult
		err   error
		file  []byte
	}{
		{"create", v1, nil, sessionfile.WriteCreated, nil, v1},
		{"same bytes", v1, refuse, sessionfile.WriteUnchanged, nil, v1},
		{"replace", v2, nil, sessionfile.WriteReplaced, nil, v2},
		{"check refuses", v1, refuse, sessionfile.WriteUnchanged, refuse, v2},
	}
	for _, c := range cases {
		var seen []byte
		res, err := sessionfile.WriteWhole(ctx, path, c.data, func(cur []byte) error { seen = cur; return c.check }, sessionfile.WriteOptions{})
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
	lk, err := sessionfile.Acquire(ctx, path, sessionfile.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionfile.WriteWhole(ctx, path, v1, nil, sessionfile.WriteOptions{}); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}

	// A symbolic link is never written through.
	testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := sessionfile.WriteWhole(ctx, link, v1, nil, sessionfile.WriteOptions{}); !errors.Is(err, vfs.ErrSymlink) {
		t.Errorf("symlink: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(v2) {
		t.Errorf("written through the link: %q", got)
	}
}
