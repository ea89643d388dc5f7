package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/redact"
)

// failingRedactor masks as package redact does, but cannot mask an entry
// that holds "unmaskable".
type failingRedactor struct{ redact.Rules }

var errCannotMask = errors.New("cannot mask this line")

func (f failingRedactor) Entry(line []byte) ([]byte, error) {
	if strings.Contains(string(line), "unmaskable") {
		return nil, errCannotMask
	}
	return f.Rules.Entry(line)
}

// TestExportRedactFailsClosed checks that export --redact writes nothing
// when a line cannot be masked: no -o file, nothing on stdout, exit 1
// with an error naming the line. (It used to export the entry unmasked.)
func TestExportRedactFailsClosed(t *testing.T) {
	saved := exportRedactor
	exportRedactor = failingRedactor{}
	t.Cleanup(func() { exportRedactor = saved })

	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	secret := "sk-proj-Abc123Def456Ghi789Jkl0"
	data := lines(vHeader, vEntry("a", ""),
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"unmaskable `+secret+`","timestamp":2}}`)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, format := range []string{"md", "html", "json"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "export."+format)
			stdout, errOut, code := runCLI(t, "export", "--format", format, "--redact", "-o", out, path)
			if code != exitFailure || stdout != "" {
				t.Errorf("export -o: exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			if !strings.Contains(errOut, "sessctl: export: redact the entry on line 3 of "+path+": redaction failed: cannot mask this line") {
				t.Errorf("stderr %q does not say which line could not be masked", errOut)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("export -o left %v; want no file", entries)
			}

			stdout, _, code = runCLI(t, "export", "--format", format, "--redact", path)
			if code != exitFailure || stdout != "" {
				t.Errorf("export to stdout: exit %d, %d bytes on stdout; want 1 and nothing", code, len(stdout))
			}

			// Without --redact the same session exports (no redactor runs).
			stdout, errOut, code = runCLI(t, "export", "--format", format, path)
			if code != exitOK || !strings.Contains(stdout, secret) {
				t.Errorf("export without --redact: exit %d: %s", code, errOut)
			}
		})
	}
}
