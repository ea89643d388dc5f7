package term

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestIsTTY checks that only a terminal counts as one: /dev/null is
// a character device, and output sent there must not be escaped or get
// progress lines.
func TestIsTTY(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, f := range map[string]*os.File{os.DevNull: null, "a pipe": w, "a file": file} {
		if IsTTY(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	// The master side of a pseudo-terminal answers as a terminal.
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to check against: %v", err)
	}
	defer pty.Close()
	if !IsTTY(pty) {
		t.Error("a pseudo-terminal is not taken for a terminal")
	}
}
