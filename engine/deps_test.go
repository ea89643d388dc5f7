package engine_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sessctl/sessctl"

// allowed lists, for each package of the module, the module packages and
// third-party modules it may import: imports point one way,
// cmd -> engine, engine/agentuse -> compaction/migrate/lock -> tree ->
// internal/jsonl, layout, layout/vfs. The two stores do not import each
// other; they share internal/errs. engine/repair, engine/stats and
// engine/render sit on engine, and search walks stores with engine's
// walk; render takes its redaction as an interface, so redact needs
// nothing but the codec. The internal packages sit at the
// bottom: the JSON codec imports nothing but golang.org/x/sys/cpu (to
// pick its AVX2 string scan), the shared errors only the codec.
var allowed = map[string][]string{
	"internal/jsonl": {"golang.org/x/sys"},
	"internal/errs":  {"internal/jsonl"},
	// The release the tree is (sessctl --version).
	"internal/release": {},
	// What engine shares with the packages that write or judge files
	// beside a session's: lock path, sidecars, whole-file writes. It
	// sits on lock (so beside engine's other helpers, not at the bottom
	// with the codec).
	"internal/sessionfile": {"layout", "layout/vfs", "lock"},
	"layout":               {}, // stdlib only (DESIGN.md): its JavaScript trim and toISOString are its own
	// The per-directory caches under the user cache directory (the list
	// and stats indexes): stamps, index lines, atomic rewrites.
	"internal/cacheindex": {"internal/jsonl", "layout", "layout/vfs"},
	"layout/vfs":          {"golang.org/x/sys"},
	"layout/vfs/vfstest":  {"layout/vfs"},
	"tree":                {"internal/jsonl"},
	"compaction":          {"internal/jsonl", "layout/vfs", "tree", "message"}, // vfs: pi's settings files
	"message":             {"internal/jsonl"},
	// migrate sits beside tree; its importers write pi's messages with
	// message's types (pi's format in one place).
	"migrate":         {"internal/human", "internal/jsonl", "internal/errs", "layout", "layout/vfs", "tree", "message", "migrate", "migrate/", "modernc.org/sqlite", "github.com/klauspost/compress"},
	"lock":            {"layout/vfs", "github.com/gofrs/flock"},
	"engine":          {"internal/cacheindex", "internal/human", "internal/jsonl", "internal/errs", "internal/sessionfile", "internal/shortid", "layout", "layout/vfs", "tree", "compaction", "message", "migrate", "lock", "golang.org/x/sync"},
	"engine/agentuse": {"internal/jsonl", "internal/errs", "layout", "layout/vfs", "lock", "github.com/oklog/ulid/v2"},
	"engine/repair":   {"engine", "internal/jsonl", "internal/human", "internal/sessionfile", "layout", "layout/vfs", "lock", "migrate", "tree"},
	"engine/importer": {"internal/human", "internal/sessionfile", "layout", "layout/vfs", "migrate"},
	"engine/stats":    {"engine", "internal/cacheindex", "internal/jsonl", "internal/human", "layout/vfs", "message", "migrate"}, // message: pi's Usage
	// engine/render: lock, for a lock's status (LockStatus); layout, for the
	// places it lists and adds up (ListPlaces, PlaceStats).
	"engine/render": {"engine", "engine/agentuse", "message", "engine/stats", "compaction", "internal/jsonl", "internal/human", "internal/sessionfile", "internal/shortid", "layout", "layout/vfs", "lock", "migrate", "tree"},
	"redact":        {"internal/jsonl"},
	// The web viewer sits on everything a reader uses (the stores, search,
	// render, stats, redact) and takes no third-party module.
	"web": {"engine", "engine/agentuse", "message", "engine/render", "engine/stats", "internal/human", "internal/jsonl", "internal/sessionfile", "internal/shortid", "layout", "layout/vfs", "lock", "migrate", "redact", "search", "tree"},
	// search watches the stores' directories with inotify (x/sys/unix),
	// and finds AgentUse sessions with agentuse.Walk, the one walk of them;
	// internal/human: a hit worded for people (Hit.WriteText).
	"search":            {"engine", "engine/agentuse", "internal/human", "internal/jsonl", "internal/shortid", "layout", "layout/vfs", "modernc.org/sqlite", "github.com/gofrs/flock", "golang.org/x/sys"},
	"internal/human":    {},
	"internal/shortid":  {"internal/sessionfile"},                   // the short ids people see and type
	"internal/workload": {"internal/jsonl", "layout", "layout/vfs"}, // writes its files through layout/vfs, as every library does
	"cmd/sessctl":       {"*"},
	// The sample session of sessctl demo, written through the engine.
	"internal/demo": {"engine", "message"},
	// The terminal as a file, for the CLI: tty detection and writev
	// (x/sys), escaping.
	"internal/term": {"internal/human", "golang.org/x/sys"},
	// make bench's workloads and its library rows against pi.
	"cmd/sessctl-bench": {"engine", "message", "internal/sessionfile", "internal/workload", "tree", "replica/s3", "github.com/minio/minio-go/v7"},
	"examples/agent":    {"engine", "message", "compaction", "tree"}, // and internal/testenv in its test
	// Replication to S3-compatible storage or a directory: the stores'
	// write paths, client-side encryption (README "Dependencies"), and
	// flock for a directory remote's compare-and-swap across processes.
	// No object-store client: backends are packages of their own that
	// the caller passes in (Options.Backends), so replica links none.
	// internal/human: a run's report worded for people (Report.WriteText).
	"replica": {"internal/human", "internal/jsonl", "internal/sessionfile", "layout", "layout/vfs", "lock", "engine", "engine/agentuse", "filippo.io/age", "github.com/gofrs/flock"},
	// The S3 backend: replica's Client over minio-go.
	"replica/s3": {"replica", "github.com/minio/minio-go/v7"},
	// The Client conformance test both backends pass (test code only).
	"replica/internal/clienttest": {"replica", "internal/testenv", "layout/vfs", "github.com/google/go-cmp"},

	// The importers' shared test checks build pi's context (test code only).
	"migrate/internal/importtest": {"internal/jsonl", "internal/testenv", "tree", "compaction", "migrate", "migrate/"},
	// What tests share: corpora, pi, child processes, crash plans (test code only).
	"internal/testenv": {},
	// make test's summary of go test -json: progress, failures, skips.
	"internal/cmd/testsum": {},
	// make api-check: the public API against the last release's.
	"internal/cmd/apicheck": {},
	// Writes the bcryptprimitives.dll wine before 9.0 lacks (make test-windows).
	"scripts/wineprng": {},

	// search's own inverted index (issue 44): segment files through the
	// vfs seam and the standard library, nothing else.
	"search/internal/textindex": {"layout/vfs"},
}

// rule returns the allow list of a package (migrate's subpackages share
// migrate's).
func rule(rel string) ([]string, bool) {
	if r, ok := allowed[rel]; ok {
		return r, true
	}
	if strings.HasPrefix(rel, "migrate/") {
		return allowed["migrate"], true
	}
	return nil, false
}

func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go tool (not there under wine): %v", err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{.Doc}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		pkg, imports, doc := parts[0], strings.Fields(parts[1]), parts[2]
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if doc == "" {
			t.Errorf("%s has no package documentation", pkg)
		}
		allow, ok := rule(rel)
		if !ok {
			t.Errorf("%s is not in the package map; add it to the allow list deliberately", pkg)
			continue
		}
		for _, imp := range imports {
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // standard library
			}
			if !permitted(rel, imp, allow) {
				t.Errorf("%s imports %s, which the package map does not allow", pkg, imp)
			}
		}
	}
}

func permitted(rel, imp string, allow []string) bool {
	for _, a := range allow {
		switch {
		case a == "*":
			return true
		case strings.Contains(strings.SplitN(a, "/", 2)[0], "."): // a third-party module
			if imp == a || strings.HasPrefix(imp, a+"/") {
				return true
			}
		case strings.HasSuffix(a, "/"): // a subtree of the module
			if strings.HasPrefix(imp, module+"/"+a) {
				return true
			}
		default:
			if imp == module+"/"+a {
				return true
			}
		}
	}
	// A package's own internal helpers (migrate/internal/...) are its own.
	return strings.HasPrefix(imp, module+"/"+rel+"/internal/")
}

// TestReadmePackageMap checks that the README's package map has one row
// for each package of the module, and no other.
func TestReadmePackageMap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go tool (not there under wine): %v", err)
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	tree := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		tree[strings.TrimPrefix(strings.TrimPrefix(p, module), "/")] = true
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Packages\n")
	if !ok {
		t.Fatal(`README.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	listed := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if listed[m[1]] {
			t.Errorf("README.md lists %s twice", m[1])
		}
		listed[m[1]] = true
		if !tree[m[1]] {
			t.Errorf("README.md's package map lists %s, which is not a package of the module", m[1])
		}
	}
	for p := range tree {
		if !listed[p] {
			t.Errorf("package %s is missing from README.md's package map", p)
		}
	}
}

// Libraries never print and never exit: only cmd/sessctl (and the
// example programs under examples/) talk to the terminal.
func TestLibrariesNeitherPrintNorExit(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	bad := regexp.MustCompile(`\bos\.Exit\(|\bfmt\.Print(f|ln)?\(|\bos\.Std(out|err)\b|\blog\.(Print|Fatal|Panic)`)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "cmd", "examples", "testdata", ".git", ".bench", "scripts":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			code := line
			if k := strings.Index(code, "//"); k >= 0 {
				code = code[:k]
			}
			if bad.MatchString(code) {
				t.Errorf("%s:%d: a library prints or exits: %s", p, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoExportedMutableState checks that no public package holds
// exported mutable state: every exported package-level var of a
// non-test file outside internal/ and cmd/ is an error sentinel (Err*).
// Tables and defaults are functions or constants, so that no program can
// change what another part of it gets (design: libraries hold no mutable
// package state).
func TestNoExportedMutableState(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "cmd", "testdata", ".git", ".bench", "scripts":
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
		if f.Name.Name == "main" {
			return nil
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() && !strings.HasPrefix(n.Name, "Err") {
						t.Errorf("%s: exported package variable %s: make it a function, a constant or unexported", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// belowEngine are the packages under engine in the layers (with every
// package in their folders), besides what engine imports: the codec,
// the file seam, the index, compaction, migration, locking and pi's
// message types.
var belowEngine = []string{"layout", "internal/jsonl", "internal/errs", "internal/cacheindex", "internal/sessionfile", "internal/shortid", "tree", "compaction", "migrate", "lock", "message"}

// childStays names the children of engine/ that may import a package
// outside engine/ that itself sits on engine, and why each stays in
// engine/ all the same. A child that imports such a package sits above
// it, so above engine's siblings: it belongs beside them at the top
// level (as web and message moved out). None stays today.
var childStays = map[string]string{}

// TestNoFolderArrowRunsUp checks that folders nest as the layers do: no
// package below engine imports engine or a child of engine/, and no
// child of engine/ imports a package outside engine/ that sits on
// engine (directly or through others), unless childStays says why.
func TestNoFolderArrowRunsUp(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go tool (not there under wine): %v", err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		return strings.CutPrefix(p, module+"/")
	}
	inEngine := func(p string) bool { return p == "engine" || strings.HasPrefix(p, "engine/") }
	imports, deps := map[string][]string{}, map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		p, _ := rel(parts[0])
		for i, list := range []map[string][]string{imports, deps} {
			for _, d := range strings.Fields(parts[i+1]) {
				if r, ok := rel(d); ok {
					list[p] = append(list[p], r)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	roots := append(slices.Clone(belowEngine), deps["engine"]...)
	below := func(p string) bool {
		for _, r := range roots {
			if !inEngine(r) && (p == r || strings.HasPrefix(p, r+"/")) {
				return true
			}
		}
		return false
	}
	for p := range imports {
		if below(p) {
			for _, d := range deps[p] {
				if inEngine(d) {
					t.Errorf("%s sits below engine but imports %s (directly or through others): an arrow up the folders", p, d)
				}
			}
		}
		if !strings.HasPrefix(p, "engine/") {
			continue
		}
		for _, imp := range imports[p] {
			if inEngine(imp) || !slices.Contains(deps[imp], "engine") {
				continue
			}
			if _, ok := childStays[p]; !ok {
				t.Errorf("%s is in engine/ but imports %s, which sits on engine: %s belongs beside %s, or childStays says why it stays", p, imp, p, imp)
			}
		}
	}
}

// codecAliases are the declarations that give the internal codec's
// types their public names: the only public lines that may name it.
var codecAliases = map[string]bool{"tree/entry.go Entry": true, "tree/entry.go Header": true, "tree/entry.go Kind": true}

// TestNoCodecTypeInPublicAPI checks that no exported function, method,
// type, field, constant or variable of a public package (outside
// internal/ and cmd/) names a type of internal/jsonl, and that no doc
// comment of one refers to it: a reader of go doc cannot follow such a
// name. The codec's types are named once, in tree (codecAliases).
func TestNoCodecTypeInPublicAPI(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	fset := token.NewFileSet()
	docRef := regexp.MustCompile(`\bjsonl\.[A-Z]`)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "cmd", "testdata", ".git", ".bench", "scripts", "examples":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		codec := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == module+"/internal/jsonl" {
				codec = "jsonl"
				if imp.Name != nil {
					codec = imp.Name.Name
				}
			}
		}
		names := func(n ast.Node) bool { // whether n names a codec type
			found := false
			ast.Inspect(n, func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok && codec != "" {
					if x, ok := s.X.(*ast.Ident); ok && x.Name == codec {
						found = true
					}
				}
				return !found
			})
			return found
		}
		bad := func(pos token.Pos, what string) {
			t.Errorf("%s: %s names the internal codec (internal/jsonl) in the public API", fset.Position(pos), what)
		}
		checkDoc := func(g *ast.CommentGroup, what string) {
			if g != nil && docRef.MatchString(g.Text()) {
				bad(g.Pos(), "the doc of "+what)
			}
		}
		if f.Name.Name == "main" {
			return nil
		}
		checkDoc(f.Doc, "package "+f.Name.Name)
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if !decl.Name.IsExported() {
					continue
				}
				if decl.Recv != nil {
					typ := decl.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if g, ok := typ.(*ast.IndexExpr); ok {
						typ = g.X
					}
					if id, ok := typ.(*ast.Ident); !ok || !id.IsExported() {
						continue
					}
				}
				if names(decl.Type) || (decl.Recv != nil && names(decl.Recv)) {
					bad(decl.Pos(), "func "+decl.Name.Name)
				}
				checkDoc(decl.Doc, decl.Name.Name)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if !spec.Name.IsExported() {
							continue
						}
						doc := spec.Doc
						if doc == nil {
							doc = decl.Doc
						}
						if codecAliases[rel+" "+spec.Name.Name] && spec.Assign.IsValid() {
							continue
						}
						checkDoc(doc, spec.Name.Name)
						switch typ := spec.Type.(type) {
						case *ast.StructType:
							for _, fl := range typ.Fields.List {
								exported := len(fl.Names) == 0 // embedded
								for _, n := range fl.Names {
									exported = exported || n.IsExported()
								}
								if exported && names(fl.Type) {
									bad(fl.Pos(), "a field of "+spec.Name.Name)
								}
							}
						default:
							if names(typ) {
								bad(spec.Pos(), "type "+spec.Name.Name)
							}
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if !n.IsExported() {
								continue
							}
							if (spec.Type != nil && names(spec.Type)) || slices.ContainsFunc(spec.Values, func(e ast.Expr) bool { return names(e) }) {
								bad(n.Pos(), n.Name)
							}
							doc := spec.Doc
							if doc == nil {
								doc = decl.Doc
							}
							checkDoc(doc, n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
