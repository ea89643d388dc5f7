package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seamExempt are the packages that may call the os package's file
// functions: the seam itself, the test environment and the scripts.
// Programs (package main: cmd/..., internal/cmd/...) may too; they are
// not libraries.
var seamExempt = []string{"layout/vfs", "layout/vfs/vfstest", "internal/testenv", "scripts/"}

// seamPending are library files that may still call os directly while
// the work that moves them onto the seam is under way: each is removed
// from the list as it goes through a vfs.FS. None is left.
var seamPending = map[string]bool{}

// fileCalls are the functions that touch the filesystem behind the seam's
// back.
var fileCalls = map[string]map[string]bool{
	"os": set("Open", "Stat", "Create", "Rename", "Lstat", "OpenFile", "ReadFile", "WriteFile", "ReadDir",
		"Remove", "RemoveAll", "MkdirAll", "Mkdir", "Chmod", "Chtimes", "Chown", "Lchown", "Readlink", "Symlink",
		"Link", "Truncate", "CreateTemp", "MkdirTemp", "DirFS"),
	"path/filepath": set("Walk", "WalkDir", "Glob"),
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// TestEveryFileOperationThroughVFS checks that no library file calls the
// os package's file functions (or filepath's walks) directly: every file
// operation of every library goes through a vfs.FS, so that CrashFS and
// FaultFS reach it (ARCHITECTURE.md).
func TestEveryFileOperationThroughVFS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go tool (not there under wine): %v", err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \" \"}} {{join .IgnoredGoFiles \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		rel := strings.TrimPrefix(strings.TrimPrefix(parts[0], module), "/")
		if exempt(rel) {
			continue
		}
		for _, name := range strings.Fields(parts[2]) {
			file := filepath.ToSlash(filepath.Join(rel, name))
			calls := directCalls(t, filepath.Join(parts[1], name))
			if calls == nil {
				continue // a program
			}
			seen[file] = len(calls) > 0
			if len(calls) > 0 && !seamPending[file] {
				t.Errorf("%s calls %s directly: go through a vfs.FS (the FS of the package's options, or vfs.OS() where only the real filesystem can do)", file, strings.Join(calls, ", "))
			}
		}
	}
	for file, pending := range seamPending {
		if pending && !seen[file] {
			t.Errorf("%s is on the seam now (or gone): remove it from seamPending", file)
		}
	}
}

func exempt(rel string) bool {
	for _, e := range seamExempt {
		if rel == e || strings.HasSuffix(e, "/") && strings.HasPrefix(rel, e) {
			return true
		}
	}
	return false
}

// directCalls returns the file functions path calls ("os.Open:12"), an
// empty list for none, and nil for a program (package main).
func directCalls(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name == "main" {
		return nil
	}
	names := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if fileCalls[p] == nil {
			continue
		}
		local := filepath.Base(p)
		if im.Name != nil {
			local = im.Name.Name
		}
		names[local] = p
	}
	calls := []string{}
	fset := token.NewFileSet()
	f, _ = parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if p, ok := names[x.Name]; ok && fileCalls[p][sel.Sel.Name] {
			calls = append(calls, x.Name+"."+sel.Sel.Name+":"+strconv.Itoa(fset.Position(call.Pos()).Line))
		}
		return true
	})
	return calls
}
