package engine_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples checks that the Go code shown in package documentation
// (the indented blocks of doc.go that parse as Go) and in the README's
// ```go blocks compiles: each must stand, line for line, in a test file
// that go test builds: its package's for a package documentation, any for
// the README. An example is written as an Example function (or a function
// an Example calls) and copied into the documentation.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	root := ".."
	tests := map[string][]string{} // directory -> its test files' lines
	var all [][]string
	var docs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", ".bench":
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(p, "_test.go"):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines := trimmedLines(string(data))
			tests[filepath.Dir(p)] = append(tests[filepath.Dir(p)], "")
			tests[filepath.Dir(p)] = append(tests[filepath.Dir(p)], lines...)
			all = append(all, lines)
		case d.Name() == "doc.go":
			docs = append(docs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range docBlocks(string(data)) {
			if !isGo(b.code) {
				continue
			}
			n++
			if !contains(tests[filepath.Dir(p)], trimmedLines(b.code)) {
				t.Errorf("%s:%d: this code example is not in the package's tests, so nothing checks that it compiles: "+
					"write it as (part of) an Example and copy it here", p, b.line)
			}
		}
	}
	mds, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range append([]string{filepath.Join(root, "README.md")}, mds...) {
		text, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range readmeBlocks(string(text)) {
			n++
			found := false
			for _, lines := range all {
				found = found || contains(lines, trimmedLines(b.code))
			}
			if !found {
				t.Errorf("%s:%d: this Go block is not in any test file, so nothing checks that it compiles: "+
					"keep it identical to engine/example_readme_test.go", md, b.line)
			}
		}
	}
	if n < 3 {
		t.Errorf("found only %d Go examples in the documentation; the walk is broken", n)
	}
}

type block struct {
	line int // where the block starts
	code string
}

// docBlocks returns the indented blocks of a file's comments.
func docBlocks(src string) []block {
	var out []block
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, block{start, strings.Join(cur, "\n")})
		}
		cur = nil
	}
	for i, l := range strings.Split(src, "\n") {
		if code, ok := strings.CutPrefix(l, "//\t"); ok {
			if cur == nil {
				start = i + 1
			}
			cur = append(cur, code)
			continue
		}
		flush()
	}
	flush()
	return out
}

// readmeBlocks returns the ```go blocks of a Markdown text.
func readmeBlocks(md string) []block {
	var out []block
	var cur []string
	in, start := false, 0
	for i, l := range strings.Split(md, "\n") {
		switch {
		case !in && l == "```go":
			in, start, cur = true, i+2, nil
		case in && l == "```":
			in = false
			out = append(out, block{start, strings.Join(cur, "\n")})
		case in:
			cur = append(cur, l)
		}
	}
	return out
}

// goCall is a call of an exported function of a package: a sign of Go.
var goCall = regexp.MustCompile(`\b[a-z]+\.[A-Z][A-Za-z0-9]*\(`)

// isGo reports whether code is Go: it parses as declarations or
// statements, or looks like Go that does not parse (a fragment with "...",
// which is exactly what must not be shown).
func isGo(code string) bool {
	if strings.Contains(code, ":=") || goCall.MatchString(code) {
		return true
	}
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+code, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}", 0)
	return err == nil
}

// trimmedLines returns the lines of s without their indentation, blank
// lines left out.
func trimmedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether want stands in lines as a run.
func contains(lines, want []string) bool {
	for i := 0; i+len(want) <= len(lines); i++ {
		match := true
		for j := range want {
			if lines[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
