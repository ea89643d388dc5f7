package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PiHeader is the header line of a small version 3 session (id "5e55-v",
// cwd "/w") for tests that write session files by hand.
const PiHeader = `{"type":"session","version":3,"id":"5e55-v","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`

// PiMessage returns the line of a user message entry with the given id
// and parent ("" writes a null parentId); its text is "text of <id>".
func PiMessage(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"text of %s","timestamp":1}}`, id, p, id)
}

// Lines joins lines into file content, each line ended by a newline.
func Lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// WriteFile writes data to path (mode 0600), creating its directories
// (0700); it fails the test on an error.
func WriteFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
