// Command apicheck guards the public API of sessctl's packages against
// silent breaking changes, the way Go's own api/go1.*.txt files do.
//
// It writes the exported API of every public package of the module (every
// package but internal/, cmd/, examples/ and scripts/) as one line per
// name and signature:
//
//	pkg github.com/sessctl/sessctl/engine, func OpenFile(context.Context, string, OpenOptions) (*Session, error)
//	pkg github.com/sessctl/sessctl/engine, method (*Session) Close() error
//	pkg github.com/sessctl/sessctl/engine, type StoreOptions struct, Dir string
//
// Usage (from the module root):
//
//	go run ./internal/cmd/apicheck            compare with the newest api/v*.txt
//	go run ./internal/cmd/apicheck -write F   write the current API to F
//
// The comparison fails when a line of the released API is gone (a name
// removed, or its signature changed) and the Unreleased section of
// CHANGELOG.md does not name it (`Name`, `Type.Method` or `Type.Field` in
// backquotes, as a changelog bullet names API). Added lines are listed
// and pass.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	write := flag.String("write", "", "write the current API to `file` instead of comparing")
	dir := flag.String("api", "api", "`directory` of the released API files (v*.txt)")
	changelog := flag.String("changelog", "CHANGELOG.md", "the changelog `file` whose Unreleased section names the changes")
	flag.Parse()
	lines, err := currentAPI()
	if err != nil {
		fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
		os.Exit(1)
	}
	if *write != "" {
		if err := os.WriteFile(*write, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("apicheck: wrote %d lines to %s\n", len(lines), *write)
		return
	}
	release, err := newestRelease(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
		os.Exit(1)
	}
	old, err := readLines(release)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
		os.Exit(1)
	}
	log, err := os.ReadFile(*changelog)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
		os.Exit(1)
	}
	if !report(os.Stdout, filepath.Base(release), old, lines, unreleased(string(log))) {
		os.Exit(1)
	}
}

// report compares the released API old with the current one and writes
// what changed to w. It returns false when a released line is gone
// without its name in the changelog text.
func report(w io.Writer, release string, old, cur []string, changelog string) bool {
	have := make(map[string]bool, len(cur))
	for _, l := range cur {
		have[l] = true
	}
	was := make(map[string]bool, len(old))
	for _, l := range old {
		was[l] = true
	}
	ok := true
	var gone, noted []string
	moves := movedPackages(changelog)
	for _, l := range old {
		if have[l] {
			continue
		}
		if have[movedLine(l, moves)] || mentioned(changelog, l) {
			noted = append(noted, l)
			continue
		}
		gone = append(gone, l)
		ok = false
	}
	var added []string
	for _, l := range cur {
		if !was[l] {
			added = append(added, l)
		}
	}
	for _, l := range gone {
		fmt.Fprintf(w, "removed or changed since %s, not in CHANGELOG's Unreleased section: %s\n", release, l)
	}
	for _, l := range noted {
		fmt.Fprintf(w, "removed or changed since %s (in CHANGELOG): %s\n", release, l)
	}
	for _, l := range added {
		fmt.Fprintf(w, "added since %s: %s\n", release, l)
	}
	if ok {
		fmt.Fprintf(w, "apicheck: the API keeps %s's (%d lines; %d added, %d changed or removed with a CHANGELOG entry)\n", release, len(old), len(added), len(noted))
	} else {
		fmt.Fprintf(w, "apicheck: %d lines of %s's API are gone without a CHANGELOG entry; name each in the Unreleased section (`Name`, `Type.Method` or `Type.Field`), or put the API back\n", len(gone), release)
	}
	return ok
}

// movePhrase is how the changelog says a package moved: "`engine/web`
// moved to `web`" (paths relative to the module).
var movePhrase = regexp.MustCompile("`([a-z0-9_/]+)` moved to `([a-z0-9_/]+)`")

// movedPackages returns the package moves the changelog text names, old
// path to new, relative to the module.
func movedPackages(changelog string) map[string]string {
	moves := map[string]string{}
	for _, m := range movePhrase.FindAllStringSubmatch(changelog, -1) {
		moves[m[1]] = m[2]
	}
	return moves
}

// movedLine returns line as it reads after its package moved, or "" when
// its package did not move. A moved package keeps its name, so the
// qualifiers in signatures stay as they were.
func movedLine(line string, moves map[string]string) string {
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return ""
	}
	path, api, ok := strings.Cut(rest, ", ")
	if !ok {
		return ""
	}
	for from, to := range moves {
		if strings.HasSuffix(path, "/"+from) {
			return "pkg " + strings.TrimSuffix(path, from) + to + ", " + api
		}
	}
	return ""
}

// unreleased returns the text of the changelog's Unreleased section.
func unreleased(log string) string {
	i := strings.Index(log, "## [Unreleased]")
	if i < 0 {
		return ""
	}
	rest := log[i+len("## [Unreleased]"):]
	if j := strings.Index(rest, "\n## ["); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// mentioned reports whether the changelog text names the API of line in
// backquotes: its name, Type.Method or Type.Field, possibly with a
// package qualifier (`engine.OpenFile`) or a call (`Store.Open(...)`).
func mentioned(changelog, line string) bool {
	for _, name := range apiNames(line) {
		for i := 0; ; {
			k := strings.Index(changelog[i:], name)
			if k < 0 {
				break
			}
			at := i + k
			i = at + len(name)
			before, after := byte(' '), byte(' ')
			if at > 0 {
				before = changelog[at-1]
			}
			if i < len(changelog) {
				after = changelog[i]
			}
			if (before == '`' || before == '.') && (after == '`' || after == '(' || after == '[') && inBackquotes(changelog, at) {
				return true
			}
		}
	}
	return false
}

// inBackquotes reports whether position at of s is inside a `...` span
// (counting backquotes from the start of its paragraph).
func inBackquotes(s string, at int) bool {
	start := strings.LastIndex(s[:at], "\n\n") + 1
	return strings.Count(s[start:at], "`")%2 == 1
}

// apiNames are the names a changelog may use for the API of one line:
// for a method or field, Type.Name; for anything else, Name.
func apiNames(line string) []string {
	_, decl, ok := strings.Cut(line, ", ")
	if !ok {
		return nil
	}
	switch {
	case strings.HasPrefix(decl, "method ("):
		// method (*Session) Close() error
		recv, rest, _ := strings.Cut(strings.TrimPrefix(decl, "method ("), ") ")
		recv = strings.TrimPrefix(recv, "*")
		if i := strings.IndexByte(recv, '['); i >= 0 {
			recv = recv[:i]
		}
		return []string{recv + "." + ident(rest)}
	case strings.HasPrefix(decl, "type "):
		// type StoreOptions struct, Dir string  /  type Replicator interface, Appended(string)
		typ := ident(strings.TrimPrefix(decl, "type "))
		if _, member, ok := strings.Cut(decl, ", "); ok {
			return []string{typ + "." + ident(strings.TrimPrefix(member, "embedded "))}
		}
		return []string{typ}
	default:
		// func F(...), const C ..., var V ...
		_, rest, _ := strings.Cut(decl, " ")
		return []string{ident(rest)}
	}
}

// ident is the identifier s starts with (after a '*').
func ident(s string) string {
	s = strings.TrimPrefix(s, "*")
	for i, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return s[:i]
		}
	}
	return s
}

// newestRelease is the api/v*.txt file of the highest version.
func newestRelease(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "v*.txt"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no released API in %s/v*.txt", dir)
	}
	sort.Slice(files, func(i, j int) bool { return versionLess(files[i], files[j]) })
	return files[len(files)-1], nil
}

// versionLess orders api/vX.Y.Z.txt by version.
func versionLess(a, b string) bool {
	va, vb := versionOf(a), versionOf(b)
	for i := range 3 {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return a < b
}

func versionOf(path string) [3]int {
	var v [3]int
	fmt.Sscanf(strings.TrimSuffix(filepath.Base(path), ".txt"), "v%d.%d.%d", &v[0], &v[1], &v[2])
	return v
}

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// listed is what go list -export says of a package.
type listed struct {
	ImportPath string
	Export     string
	Module     *struct{ Main bool }
	Name       string
}

// currentAPI type-checks nothing itself: it reads the export data the go
// command builds (go list -export) and prints the exported API of every
// public package of the main module.
func currentAPI() ([]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Module,Name", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	exports := map[string]string{}
	var public []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Main && p.Name != "main" && isPublic(p.ImportPath) {
			public = append(public, p.ImportPath)
		}
	}
	sort.Strings(public)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var lines []string
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", path, err)
		}
		lines = append(lines, packageAPI(pkg)...)
	}
	return lines, nil
}

// isPublic reports whether a package of the module is one an embedding
// program may import.
func isPublic(path string) bool {
	rel := strings.TrimPrefix(path, "github.com/sessctl/sessctl")
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case "internal", "cmd", "examples", "scripts", "testdata":
			return false
		}
	}
	return true
}

// packageAPI lists the exported API of pkg, sorted.
func packageAPI(pkg *types.Package) []string {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	prefix := "pkg " + pkg.Path() + ", "
	var lines []string
	add := func(s string) { lines = append(lines, prefix+s) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add(fmt.Sprintf("const %s %s = %s", name, types.TypeString(o.Type(), qual), o.Val().ExactString()))
		case *types.Var:
			add(fmt.Sprintf("var %s %s", name, types.TypeString(o.Type(), qual)))
		case *types.Func:
			add("func " + name + signature(o.Type().(*types.Signature), qual))
		case *types.TypeName:
			lines = append(lines, typeAPI(prefix, o, qual)...)
		}
	}
	sort.Strings(lines)
	return lines
}

// typeAPI lists a named type: its kind, then its exported fields or
// interface methods, then its exported methods.
func typeAPI(prefix string, o *types.TypeName, qual types.Qualifier) []string {
	name := o.Name()
	var lines []string
	add := func(s string) { lines = append(lines, prefix+s) }
	if o.IsAlias() {
		add(fmt.Sprintf("type %s = %s", name, types.TypeString(o.Type(), qual)))
		// The methods and fields of an alias are those of the type it
		// names; list them under the alias too, so that a change there
		// shows.
	}
	under := o.Type().Underlying()
	switch u := under.(type) {
	case *types.Struct:
		if !o.IsAlias() {
			add("type " + name + " struct")
		}
		for f := range u.Fields() {
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add(fmt.Sprintf("type %s struct, embedded %s", name, types.TypeString(f.Type(), qual)))
				continue
			}
			add(fmt.Sprintf("type %s struct, %s %s", name, f.Name(), types.TypeString(f.Type(), qual)))
		}
	case *types.Interface:
		if !o.IsAlias() {
			add("type " + name + " interface")
		}
		for m := range u.Methods() {
			if m.Exported() {
				add(fmt.Sprintf("type %s interface, %s%s", name, m.Name(), signature(m.Type().(*types.Signature), qual)))
			}
		}
	default:
		if !o.IsAlias() {
			add(fmt.Sprintf("type %s %s", name, types.TypeString(under, qual)))
		}
	}
	ms := types.NewMethodSet(types.NewPointer(o.Type()))
	for sel := range ms.Methods() {
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		if _, isIface := under.(*types.Interface); isIface {
			continue
		}
		recv := name
		sig := m.Type().(*types.Signature)
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + name
		}
		add(fmt.Sprintf("method (%s) %s%s", recv, m.Name(), signature(sig, qual)))
	}
	return lines
}

// signature writes a function's parameter and result types without their
// names, which a caller does not depend on: "(context.Context, string)
// (*Session, error)".
func signature(sig *types.Signature, qual types.Qualifier) string {
	var b strings.Builder
	tuple := func(t *types.Tuple, variadic bool) {
		b.WriteByte('(')
		for i := range t.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			typ := t.At(i).Type()
			if variadic && i == t.Len()-1 {
				b.WriteString("...")
				typ = typ.(*types.Slice).Elem()
			}
			b.WriteString(types.TypeString(typ, qual))
		}
		b.WriteByte(')')
	}
	tuple(sig.Params(), sig.Variadic())
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		b.WriteByte(' ')
		b.WriteString(types.TypeString(r.At(0).Type(), qual))
	default:
		b.WriteByte(' ')
		tuple(r, false)
	}
	return b.String()
}
