package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
