package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function's (or function literal's) length, from
// its func keyword to its closing brace: a longer one is split into
// steps that say what they do (issue 41).
const maxFuncLines = 150

// longFuncsTODO are the functions, by package directory and name, still
// over maxFuncLines while their split is under way elsewhere.
// TODO(issue 41): empty once they are split.
var longFuncsTODO = map[string]bool{}

// TestNoLongFunctions: no function or function literal in the non-test
// Go code of the repository is over maxFuncLines lines.
func TestNoLongFunctions(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, p)
		dir := filepath.ToSlash(filepath.Dir(rel))
		outer := "" // the function declaration a literal is in
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := ""
			switch x := n.(type) {
			case *ast.FuncDecl:
				body, name, outer = x.Body, x.Name.Name, x.Name.Name
			case *ast.FuncLit:
				body, name = x.Body, "a function literal in "+outer
			case *ast.GenDecl:
				outer = "a package-level declaration"
			}
			if body == nil {
				return true
			}
			lines := fset.Position(body.End()).Line - fset.Position(n.Pos()).Line + 1
			if lines <= maxFuncLines {
				return true
			}
			if _, ok := n.(*ast.FuncDecl); ok && longFuncsTODO[dir+" "+name] {
				t.Logf("%s:%d: %s is %d lines (on the TODO list)", filepath.ToSlash(rel), fset.Position(n.Pos()).Line, name, lines)
				return true
			}
			t.Errorf("%s:%d: %s is %d lines, over %d: split it into steps", filepath.ToSlash(rel), fset.Position(n.Pos()).Line, name, lines, maxFuncLines)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files below %s; want the whole repository", files, root)
	}
}
