package engine_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// beside a session's: lock path, sidecars, whole-file writes.
	"internal/sessionfile": {"layout", "layout/vfs", "lock"},
	"layout":               {"internal/jsonl"},
	// The per-directory caches under the user cache directory (the list
	// and stats indexes): stamps, index lines, atomic rewrites.
	"internal/cacheindex": {"internal/jsonl", "layout", "layout/vfs"},
	"layout/vfs":          {"golang.org/x/sys"},
	"layout/vfs/vfstest":  {"layout/vfs"},
	"tree":                {"internal/jsonl"},
	"compaction":          {"internal/jsonl", "tree", "message"},
	"message":             {"internal/jsonl"},
	"migrate":             {"internal/jsonl", "internal/errs", "layout", "layout/vfs", "tree", "migrate", "migrate/", "modernc.org/sqlite", "github.com/klauspost/compress"},
	"lock":                {"layout/vfs", "github.com/gofrs/flock"},
	"engine":              {"internal/cacheindex", "internal/jsonl", "internal/errs", "internal/sessionfile", "internal/shortid", "layout", "layout/vfs", "tree", "compaction", "message", "migrate", "lock", "golang.org/x/sync"},
	"engine/agentuse":     {"internal/jsonl", "internal/errs", "layout", "layout/vfs", "lock", "github.com/oklog/ulid/v2"},
	"engine/repair":       {"engine", "internal/jsonl", "internal/human", "internal/sessionfile", "layout", "layout/vfs", "lock", "migrate", "tree"},
	"engine/importer":     {"internal/sessionfile", "layout", "layout/vfs", "migrate"},
	"engine/stats":        {"engine", "internal/cacheindex", "internal/jsonl", "internal/human", "layout/vfs", "migrate"},
	"engine/render":       {"engine", "engine/agentuse", "message", "engine/stats", "compaction", "internal/jsonl", "internal/human", "internal/sessionfile", "internal/shortid", "layout/vfs", "migrate", "tree"},
	"redact":              {"internal/jsonl"},
	// The web viewer sits on everything a reader uses (the stores, search,
	// render, stats, redact) and takes no third-party module.
	"web": {"engine", "engine/agentuse", "message", "engine/render", "engine/stats", "internal/human", "internal/jsonl", "internal/sessionfile", "internal/shortid", "layout", "layout/vfs", "lock", "migrate", "redact", "search", "tree"},
	// search watches the stores' directories with inotify (x/sys/unix),
	// and finds AgentUse sessions with agentuse.Walk, the one walk of them.
	"search":            {"engine", "engine/agentuse", "internal/jsonl", "layout", "layout/vfs", "modernc.org/sqlite", "github.com/gofrs/flock", "golang.org/x/sys"},
	"internal/human":    {},
	"internal/shortid":  {"internal/sessionfile"}, // the short ids people see and type
	"internal/workload": {"internal/jsonl", "layout"},
	"cmd/sessctl":       {"*"},
	// make bench's workloads and its library rows against pi.
	"cmd/sessctl-bench": {"engine", "message", "internal/sessionfile", "internal/workload", "tree", "replica", "github.com/minio/minio-go/v7"},
	"examples/agent":    {"engine", "message", "compaction", "tree"}, // and internal/testenv in its test
	// Replication to S3-compatible storage or a directory: the stores'
	// write paths, the S3 client, client-side encryption (README
	// "Dependencies"), and flock for a directory remote's
	// compare-and-swap across processes.
	"replica": {"internal/jsonl", "internal/sessionfile", "layout", "layout/vfs", "lock", "engine", "engine/agentuse", "github.com/minio/minio-go/v7", "filippo.io/age", "github.com/gofrs/flock"},

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
