package codex

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// TestZstdBomb: a small .jsonl.zst that expands to one endless line (issue
// 39: 250 KB to one 8 GB line took import codex to 23.6 GB) is read line by
// line with a bound on one line: the line over it is skipped and reported
// as damage naming the file and the line, the lines around it are
// imported, and the heap stays far below the line's size. Here a 64 MB
// line with the bound at 1 MB.
func TestZstdBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 64 MB")
	}
	const huge = 64 << 20
	home := t.TempDir()
	path := filepath.Join(home, "sessions", "2026", "03", "01", compressedName+".zst")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(compressed, "\n")
	write := func(s string) {
		if _, err := enc.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(lines[0] + lines[1] + lines[2])
	write(`{"timestamp":"2026-03-01T08:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"`)
	chunk := strings.Repeat("a", 1<<20)
	for range huge >> 20 {
		write(chunk)
	}
	write("\"}]}}\n" + lines[5])
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	t.Logf("%d compressed bytes", st.Size())

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var res *importtest.Result
	peak := testenv.PeakHeap(func() {
		res = importtest.Import(t, Source{}, path, migrate.ImportOptions{MaxLine: 1 << 20})
	})
	t.Logf("peak heap %.1f MB", float64(peak)/(1<<20))
	if peak > 16<<20 {
		t.Errorf("peak heap %d bytes for a rollout with a %d-byte line and a bound of 1 MB", peak, huge)
	}
	if len(res.Sessions) != 1 || len(res.Damage) != 1 {
		t.Fatalf("%d sessions, damage %v; want 1 session and the long line as damage", len(res.Sessions), res.Damage)
	}
	var d *migrate.Damage
	if !errors.As(res.Damage[0], &d) || d.Path != path || d.Line != 4 || !errors.Is(d, migrate.ErrLineTooLong) {
		t.Errorf("damage %v; want %s line 4, a line too long", res.Damage[0], path)
	}
	want := []importtest.Msg{
		{Role: "user", Text: "list files"},
		{Role: "assistant", Text: "One file: a.go"},
	}
	if diff := cmp.Diff(want, importtest.Load(t, res.Sessions[0], "").Messages()); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
}
