package web

import (
	"html"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestFaultSessionPage makes every file operation on a session file fail
// with EIO, through Options.FS: its page is an error page naming the file
// and the error (not a panic, not a page of nothing), the file is as it
// was, and once the disk reads again the page shows the session.
func TestFaultSessionPage(t *testing.T) {
	ffs := vfstest.NewFaultFS(vfs.OS())
	s := newServer(t, Options{FS: ffs})
	f := writeFixture(t, s.root, "/home/dev/app")
	page := s.page(f.file)
	before := fileBytes(t, f.file)
	ffs.SetHook(func(op vfstest.Op, p string) error {
		if p == f.file {
			return syscall.EIO
		}
		return nil
	})
	code, body := s.get(page)
	if ffs.Injected() == 0 {
		t.Fatal("the fault was never reached: the session page bypasses Options.FS")
	}
	if code != http.StatusInternalServerError {
		t.Errorf("GET %s with an unreadable file: %d, want 500\n%s", page, code, body)
	}
	text := html.UnescapeString(body)
	if !strings.Contains(text, syscall.EIO.Error()) || !strings.Contains(text, filepath.Base(f.file)) {
		t.Errorf("the error page does not say what failed on which file:\n%s", body)
	}
	if strings.Contains(text, "Why does the build fail?") {
		t.Errorf("the error page shows the session")
	}
	ffs.SetHook(nil)
	if body := s.mustGet(page); !strings.Contains(html.UnescapeString(body), "Why does the build fail?") {
		t.Errorf("the page once the file reads again does not show the session:\n%s", body)
	}
	if fileBytes(t, f.file) != before {
		t.Errorf("the session file changed")
	}
}
