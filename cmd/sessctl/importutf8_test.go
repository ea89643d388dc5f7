package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestImportInvalidUTF8: a source line holding bytes that are not UTF-8
// is damaged source data: it is reported under "damaged" with its path
// and line (exit 4), the rest of the session is imported, and no text is
// imported with its bytes replaced by U+FFFD.
func TestImportInvalidUTF8(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	file := filepath.Join(tmp, "claude", "projects", "-w", "s1.jsonl")
	noErr(t, os.MkdirAll(filepath.Dir(file), 0o700))
	data := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","role":"assistant","model":"x","content":[{"type":"text","text":"broken BAD text"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"u1","sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m2","role":"assistant","model":"x","content":[{"type":"text","text":"hello"}]}}
`
	data = strings.Replace(data, "BAD", "\xff\xfe", 1)
	noErr(t, os.WriteFile(file, []byte(data), 0o600))
	doc := importJSON(t, exitCorrupt, "claude", filepath.Join(tmp, "claude"))
	if len(doc.Damaged) != 1 || doc.Damaged[0].Path != file || doc.Damaged[0].Line != 2 || !strings.Contains(doc.Damaged[0].Error, "not valid UTF-8") {
		t.Fatalf("damaged: %+v, want %s line 2, not valid UTF-8", doc.Damaged, file)
	}
	if len(doc.Sessions) != 1 {
		t.Fatalf("sessions: %+v", doc.Sessions)
	}
	out, err := os.ReadFile(doc.Sessions[0].File)
	noErr(t, err)
	if !strings.Contains(string(out), "hello") || strings.Contains(string(out), "broken") || strings.Contains(string(out), "\uFFFD") {
		t.Errorf("imported session:\n%s\nwant line 3's text, not line 2's, and no U+FFFD", out)
	}
}

// noErr fails the test on err.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportInvalidUTF8Compressed: the same holds inside a compressed
// Codex rollout: the damaged line is reported with the .zst file and its
// line in the decompressed text.
func TestImportInvalidUTF8Compressed(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	zst := filepath.Join(tmp, "codex", "sessions", "2026", "03", "01", "rollout-2026-03-01T09-00-00-0195a1f0-0000-7000-8000-00000000000c.jsonl.zst")
	noErr(t, os.MkdirAll(filepath.Dir(zst), 0o700))
	data := `{"timestamp":"2026-03-01T08:00:00.000Z","type":"session_meta","payload":{"id":"0195a1f0-0000-7000-8000-00000000000c","cwd":"/w"}}
{"timestamp":"2026-03-01T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"broken BAD text"}]}}
{"timestamp":"2026-03-01T08:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}
`
	data = strings.Replace(data, "BAD", "\xff\xfe", 1)
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z)
	noErr(t, err)
	_, err = enc.Write([]byte(data))
	noErr(t, err)
	noErr(t, enc.Close())
	noErr(t, os.WriteFile(zst, z.Bytes(), 0o600))
	doc := importJSON(t, exitCorrupt, "codex", filepath.Join(tmp, "codex"))
	if len(doc.Damaged) != 1 || doc.Damaged[0].Path != zst || doc.Damaged[0].Line != 2 || !strings.Contains(doc.Damaged[0].Error, "not valid UTF-8") {
		t.Fatalf("damaged: %+v, want %s line 2, not valid UTF-8", doc.Damaged, zst)
	}
	out, err := os.ReadFile(doc.Sessions[0].File)
	noErr(t, err)
	if !strings.Contains(string(out), "hello") || strings.Contains(string(out), "broken") || strings.Contains(string(out), "\uFFFD") {
		t.Errorf("imported session:\n%s", out)
	}
}
