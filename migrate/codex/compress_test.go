package codex

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// compressed is the test rollout: a user prompt, a tool call and its
// output, and the answer.
var compressed = strings.Join([]string{
	`{"timestamp":"2026-03-01T08:00:00.100Z","type":"session_meta","payload":{"id":"0195a1f0-0000-7000-8000-00000000000c","timestamp":"2026-03-01T08:00:00.000Z","cwd":"/work/z","originator":"codex_cli_rs","cli_version":"0.140.0","source":"cli","model_provider":"openai"}}`,
	`{"timestamp":"2026-03-01T08:00:01.000Z","type":"turn_context","payload":{"cwd":"/work/z","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.5","summary":"auto"}}`,
	`{"timestamp":"2026-03-01T08:00:01.010Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}}`,
	`{"timestamp":"2026-03-01T08:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}}`,
	`{"timestamp":"2026-03-01T08:00:04.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a.go\n"}}`,
	`{"timestamp":"2026-03-01T08:00:06.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"One file: a.go"}]}}`,
}, "\n") + "\n"

const compressedName = "rollout-2026-03-01T09-00-00-0195a1f0-0000-7000-8000-00000000000c.jsonl"

// zstdFrame compresses data into one zstd frame, as Codex does (level 3,
// no checksum) or, with check, as the zstd tool does by default.
func zstdFrame(t *testing.T, data []byte, check bool) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(check))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t *testing.T, path string, data []byte, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompressedRollout: a rollout Codex compressed (rollout-*.jsonl.zst)
// imports to exactly the bytes of its plain .jsonl, whether it is one
// frame as Codex writes it or several frames with checksums (a file
// recompressed with the zstd tool); Codex's temporary files are not read.
func TestCompressedRollout(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "03", "01")
	plain := filepath.Join(day, compressedName)
	writeFile(t, plain, []byte(compressed), time.Time{})
	// Temporary files of Codex's compressor and of its decompression.
	writeFile(t, filepath.Join(day, "rollout-compress-Xy12.tmp"), zstdFrame(t, []byte(compressed), false), time.Time{})
	writeFile(t, filepath.Join(day, compressedName+".zst.compress.1.0.tmp"), []byte("partial"), time.Time{})
	opts := migrate.ImportOptions{}
	first := importtest.Import(t, Source{}, home, opts)
	if len(first.Sessions) != 1 || len(first.Damage) != 0 || len(first.Skipped) != 0 {
		t.Fatalf("plain: %d sessions, damage %v, skipped %v", len(first.Sessions), first.Damage, first.Skipped)
	}
	want := first.Sessions[0].Bytes("")
	got := importtest.Load(t, first.Sessions[0], "").Messages()
	wantMsgs := []importtest.Msg{
		{Role: "user", Text: "list files"},
		{Role: "assistant", ToolCalls: []string{"call_1"}},
		{Role: "toolResult", Text: "a.go\n", ToolCallID: "call_1"},
		{Role: "assistant", Text: "One file: a.go"},
	}
	if diff := cmp.Diff(wantMsgs, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}

	frames := map[string][]byte{
		"one frame, as Codex writes": zstdFrame(t, []byte(compressed), false),
		"two frames with checksums": append(zstdFrame(t, []byte(compressed[:300]), true),
			zstdFrame(t, []byte(compressed[300:]), true)...),
	}
	for name, z := range frames {
		t.Run(name, func(t *testing.T) {
			if err := os.Remove(plain); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			writeFile(t, plain+".zst", z, time.Time{})
			for _, path := range []string{home, plain + ".zst"} {
				res := importtest.Import(t, Source{}, path, opts)
				if len(res.Sessions) != 1 || len(res.Damage) != 0 || len(res.Skipped) != 0 {
					t.Fatalf("%s: %d sessions, damage %v, skipped %v", path, len(res.Sessions), res.Damage, res.Skipped)
				}
				if got := res.Sessions[0].Bytes(""); !bytes.Equal(got, want) {
					t.Errorf("%s: the compressed rollout imports to other bytes:\n%s\nwant\n%s", path, got, want)
				}
				if res.Refs[0].Path != plain+".zst" || res.Sessions[0].ReadFrom != plain+".zst" || res.Sessions[0].SourcePath != plain {
					t.Errorf("ref path %s, read from %q, source path %s; want the compressed file read, the plain one named", res.Refs[0].Path, res.Sessions[0].ReadFrom, res.Sessions[0].SourcePath)
				}
				st, _ := os.Stat(plain + ".zst")
				if got := res.Read[plain+".zst"]; got != [2]int64{st.Size(), st.Size()} {
					t.Errorf("progress %v, want the compressed file's size %d", got, st.Size())
				}
			}
			if !Source.Detect(Source{}, plain+".zst") || !Source.Detect(Source{}, home) {
				t.Error("a compressed rollout is not detected")
			}
		})
	}
}

// TestCompressedTwins: while Codex compresses a rollout (or decompresses
// it to append), the .jsonl and the .jsonl.zst of one session exist side
// by side. One is imported, never both: the plain file unless the
// compressed one is strictly newer; the other is reported as skipped.
func TestCompressedTwins(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	appended := compressed + `{"timestamp":"2026-03-09T08:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one more"}]}}` + "\n"
	cases := []struct {
		name               string
		plain, zst         string
		plainTime, zstTime time.Time
		wantRead, wantSkip string // "plain" or "zst"
		wantLast           string // the text of the last user message
	}{
		{"same time: plain", compressed, compressed, base, base, "plain", "zst", "list files"},
		{"plain newer (appended after decompressing)", appended, compressed, base.Add(time.Hour), base, "plain", "zst", "one more"},
		{"compressed newer", compressed, appended, base, base.Add(time.Second), "zst", "plain", "one more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			plain := filepath.Join(home, "sessions", "2026", "03", "01", compressedName)
			writeFile(t, plain, []byte(c.plain), c.plainTime)
			writeFile(t, plain+".zst", zstdFrame(t, []byte(c.zst), false), c.zstTime)
			files := map[string]string{"plain": plain, "zst": plain + ".zst"}
			res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
			if len(res.Sessions) != 1 || len(res.Refs) != 1 {
				t.Fatalf("%d sessions from %d refs, want one", len(res.Sessions), len(res.Refs))
			}
			if res.Refs[0].Path != files[c.wantRead] {
				t.Errorf("read %s, want %s", res.Refs[0].Path, files[c.wantRead])
			}
			if len(res.Skipped) != 1 || res.Skipped[0].Path != files[c.wantSkip] || res.Skipped[0].SourceID != "0195a1f0-0000-7000-8000-00000000000c" ||
				!strings.Contains(res.Skipped[0].Reason, filepath.Base(files[c.wantRead])) {
				t.Errorf("skipped %+v, want %s reported", res.Skipped, files[c.wantSkip])
			}
			var last string
			for _, m := range importtest.Load(t, res.Sessions[0], "").Messages() {
				if m.Role == "user" {
					last = m.Text
				}
			}
			if last != c.wantLast {
				t.Errorf("last prompt %q, want %q", last, c.wantLast)
			}
		})
	}
}

// TestCompressedDamage: a line of a compressed rollout that is not UTF-8
// is reported with the file and its line, as in a plain one; a compressed
// file that is cut short keeps the lines before the cut and reports the
// rest as damage at the line where it breaks off.
func TestCompressedDamage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	plain := filepath.Join(home, "sessions", "2026", "03", "01", compressedName)
	lines := strings.SplitAfter(compressed, "\n")
	bad := strings.Replace(lines[5], "One file", "One \xff file", 1)
	data := strings.Join(lines[:5], "") + bad
	writeFile(t, plain+".zst", zstdFrame(t, []byte(data), false), time.Time{})
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != plain+".zst" || res.Damage[0].Line != 6 || !errors.Is(res.Damage[0], migrate.ErrInvalidUTF8) {
		t.Fatalf("damage %v, want line 6 of %s not UTF-8", res.Damage, plain+".zst")
	}
	if len(res.Sessions) != 1 || bytes.Contains(res.Sessions[0].Bytes(""), []byte("One")) {
		t.Errorf("the damaged line was imported")
	}

	// Cut short: a long rollout (many blocks in its frame) whose file
	// ends two thirds in.
	var long strings.Builder
	long.WriteString(compressed)
	for i := 0; long.Len() < 1<<20; i++ {
		fmt.Fprintf(&long, `{"timestamp":"2026-03-01T08:01:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"prompt %d %s"}]}}`+"\n", i, strings.Repeat(strconv.Itoa(i), 1+i%50))
	}
	z := zstdFrame(t, []byte(long.String()), false)
	writeFile(t, plain+".zst", z[:len(z)*2/3], time.Time{})
	res = importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != plain+".zst" || res.Damage[0].Line == 0 {
		t.Fatalf("damage %v, want one at a line of %s", res.Damage, plain+".zst")
	}
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions, want the lines before the cut", len(res.Sessions))
	}
	msgs := importtest.Load(t, res.Sessions[0], "").Messages()
	if len(msgs) == 0 || msgs[0].Text != "list files" {
		t.Errorf("context %+v, want the lines before the cut", msgs)
	}
}
