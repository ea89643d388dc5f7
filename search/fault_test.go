package search

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// readAll returns the bytes of the files, to check that a failed search
// changed none of them.
func readAll(t *testing.T, paths ...string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestFaultIndexFiles injects a failure into the index's own files (an
// EIO creating a database file, ENOSPC writing the state record) through
// Options.FS: the search fails with ErrIndex and an error naming the
// file, the sessions are untouched, and once the disk is well again the
// same index answers as a fresh one.
func TestFaultIndexFiles(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	q := Query{Text: "flaky", Stores: stores}
	want := searchAll(t, openIndex(t, Options{}), q)
	if len(want) < 2 {
		t.Fatalf("the fixture has %d hits for flaky, want at least 2: %v", len(want), want)
	}
	cases := []struct {
		name  string
		fault func(dir string) vfstest.Fault
		file  func(dir string) string
	}{
		{"create database EIO", func(dir string) vfstest.Fault {
			return vfstest.Fault{Op: vfstest.OpCreate, Err: syscall.EIO, Match: func(p string) bool { return p == filepath.Join(dir, "index-0.db") }}
		}, func(dir string) string { return filepath.Join(dir, "index-0.db") }},
		{"write state ENOSPC", func(dir string) vfstest.Fault {
			return vfstest.Fault{Op: vfstest.OpWrite, Err: syscall.ENOSPC, Written: -1, Repeat: true,
				Match: func(p string) bool { return strings.HasPrefix(filepath.Base(p), stateName) }}
		}, func(dir string) string { return filepath.Join(dir, stateName) }},
	}
	if ownEngine() {
		cases = cases[:0]
		for _, name := range []string{ownDocsName, ownStateName} {
			op, err := vfstest.OpCreate, error(syscall.EIO)
			if name == ownStateName {
				op, err = vfstest.OpWrite, syscall.ENOSPC
			}
			cases = append(cases, struct {
				name  string
				fault func(dir string) vfstest.Fault
				file  func(dir string) string
			}{"own " + name, func(dir string) vfstest.Fault {
				return vfstest.Fault{Op: op, Err: err, Written: -1, Repeat: true, Match: func(p string) bool {
					return filepath.Dir(p) == filepath.Join(dir, ownDirName) && strings.HasPrefix(filepath.Base(p), name)
				}}
			}, func(dir string) string { return filepath.Join(dir, ownDirName, name) }})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			ffs := vfstest.NewFaultFS(vfs.OS())
			x := openIndex(t, Options{Dir: dir, FS: ffs})
			before := readAll(t, s1, s2)
			ft := c.fault(dir)
			ffs.Inject(ft)
			_, err := collect(x, q)
			if err == nil {
				t.Fatal("the search succeeded with a broken index file")
			}
			if !errors.Is(err, ErrIndex) || !errors.Is(err, ft.Err) {
				t.Errorf("error %v: want one matching ErrIndex and %v", err, ft.Err)
			}
			if !strings.Contains(err.Error(), c.file(dir)) {
				t.Errorf("error %q does not name %s", err, c.file(dir))
			}
			if ffs.Injected() == 0 {
				t.Fatal("the fault was never reached: the index files bypass Options.FS")
			}
			if diff := cmp.Diff(before, readAll(t, s1, s2)); diff != "" {
				t.Errorf("a failed search changed a session file")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if vfs.IsTempName(e.Name()) {
					t.Errorf("a failed write left %s", e.Name())
				}
			}
			ffs.Clear()
			if diff := cmp.Diff(want, searchAll(t, x, q)); diff != "" {
				t.Errorf("after the disk recovered (-fresh index +this one):\n%s", diff)
			}
		})
	}
}

// TestFaultSessionRead injects EIO into the reads of one session file,
// with and without an index: the search goes on without it and tells
// Warn an error naming the file, the file is untouched, and once it reads
// again the search finds everything.
func TestFaultSessionRead(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	q := Query{Text: "flaky", Stores: stores}
	want := searchAll(t, openIndex(t, Options{}), q)
	for _, noIndex := range []bool{false, true} {
		name := "index"
		if noIndex {
			name = "no index"
		}
		t.Run(name, func(t *testing.T) {
			ffs := vfstest.NewFaultFS(vfs.OS())
			var warned []error
			x := openIndex(t, Options{NoIndex: noIndex, FS: ffs, Warn: func(err error) { warned = append(warned, err) }})
			before := readAll(t, s1, s2)
			ffs.Inject(vfstest.Fault{Op: vfstest.OpRead, Err: syscall.EIO, Repeat: true, Match: func(p string) bool { return p == s1 }})
			got := searchAll(t, x, q)
			if len(warned) != 1 || !errors.Is(warned[0], syscall.EIO) || !strings.Contains(warned[0].Error(), s1) {
				t.Fatalf("warnings %v: want one EIO naming %s", warned, s1)
			}
			for _, h := range got {
				if h == "u1 user" || h == "a1 toolCall" {
					t.Errorf("hit %s of the unreadable file", h)
				}
			}
			if len(got) == 0 {
				t.Errorf("no hits: the readable session was left out too")
			}
			if !bytes.Equal(before[0], readAll(t, s1)[0]) {
				t.Errorf("the unreadable session changed")
			}
			ffs.Clear()
			warned = nil
			if diff := cmp.Diff(want, searchAll(t, x, q)); diff != "" {
				t.Errorf("after the file read again (-want +got):\n%s", diff)
			}
			if len(warned) != 0 {
				t.Errorf("warnings once the file reads: %v", warned)
			}
		})
	}
}
