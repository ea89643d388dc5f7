package engine_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

// piParity maps every public member of pi's SessionManager (instance and
// static) to its Go counterpart: "Session.Name" (a method, checked to
// exist), "engine.Name" (a package function, listed in goFuncs), or
// "not applicable: why".
var piParity = map[string]string{
	"setSessionFile":            "Session.SetSessionFile",
	"newSession":                "Session.NewSession",
	"isPersisted":               "Session.IsPersisted",
	"getCwd":                    "Session.Cwd",
	"getSessionDir":             "Session.SessionDir",
	"getSessionId":              "Session.SessionID",
	"getSessionFile":            "Session.SessionFile",
	"_persist":                  "not applicable: pi's internal write step (underscore), public only in TypeScript's emit; Session writes each append itself",
	"appendMessage":             "Session.AppendMessage",
	"appendThinkingLevelChange": "Session.AppendThinkingLevelChange",
	"appendModelChange":         "Session.AppendModelChange",
	"appendCompaction":          "Session.AppendCompaction",
	"appendCustomEntry":         "Session.AppendCustomEntry",
	"appendSessionInfo":         "Session.AppendSessionInfo",
	"getSessionName":            "Session.Name",
	"appendCustomMessageEntry":  "Session.AppendCustomMessageEntry",
	"getLeafId":                 "Session.LeafIDKind",
	"getLeafEntry":              "Session.LeafEntry",
	"getEntry":                  "Session.Entry",
	"getChildren":               "Session.Children",
	"getLabel":                  "Session.Label",
	"appendLabelChange":         "Session.AppendLabelChange",
	"getBranch":                 "Session.BranchPath",
	"buildSessionContext":       "Session.Context",
	"getHeader":                 "Session.Header",
	"getEntries":                "Session.Entries",
	"getTree":                   "Session.Tree",
	"branch":                    "Session.Branch",
	"resetLeaf":                 "Session.ResetLeaf",
	"branchWithSummary":         "Session.BranchWithSummary",
	"createBranchedSession":     "Session.CreateBranchedSession",
	"create":                    "engine.Create",
	"open":                      "engine.Open",
	"continueRecent":            "engine.ContinueRecent",
	"inMemory":                  "engine.InMemory",
	"forkFrom":                  "engine.ForkFrom",
	"list":                      "engine.List",
	"listAll":                   "engine.ListAll",
}

// piModuleParity maps the functions session-manager exports beside the
// class.
var piModuleParity = map[string]string{
	"getLatestCompactionEntry": "compaction.LatestCompactionEntry",
	"buildSessionContext":      "compaction.Build",
	"findMostRecentSession":    "engine.FindMostRecent",
	"getDefaultSessionDir":     "layout.DefaultSessionDir",
	"migrateSessionEntries":    "not applicable: migration is package migrate's (migrate.Entries), applied by Open",
	"parseSessionEntries":      "not applicable: parsing is internal (internal/jsonl), applied by Open",
	"loadEntriesFromFile":      "not applicable: loading is internal, applied by Open (Session.Entries gives the result)",
}

// goFuncs are the package functions the tables may name.
var goFuncs = map[string]any{
	"engine.Create": engine.Create, "engine.Open": engine.Open, "engine.ContinueRecent": engine.ContinueRecent,
	"engine.InMemory": engine.InMemory, "engine.ForkFrom": engine.ForkFrom, "engine.List": engine.List,
	"engine.ListAll": engine.ListAll, "engine.FindMostRecent": engine.FindMostRecent,
	"compaction.LatestCompactionEntry": compaction.LatestCompactionEntry, "compaction.Build": compaction.Build,
	"layout.DefaultSessionDir": layout.DefaultSessionDir,
}

// TestPiSessionManagerParity lists the public methods of the reference
// pi's SessionManager (and the functions its module exports) from its
// .d.ts and checks that each has a Go counterpart or says why not, so a
// method a new pi adds is noticed.
func TestPiSessionManagerParity(t *testing.T) {
	_, modules := testenv.Pi(t)
	data, err := os.ReadFile(filepath.Join(modules, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core", "session-manager.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	start := strings.Index(src, "export declare class SessionManager")
	if start < 0 {
		t.Fatal("no SessionManager class in session-manager.d.ts")
	}
	end := start + strings.Index(src[start:], "\n}")
	member := regexp.MustCompile(`(?m)^    (?:static )?([A-Za-z_$][A-Za-z0-9_$]*)[<(]`)
	var methods []string
	for _, m := range member.FindAllStringSubmatch(src[start:end], -1) {
		if !slices.Contains(methods, m[1]) {
			methods = append(methods, m[1])
		}
	}
	if len(methods) < 30 {
		t.Fatalf("found only %d methods in the .d.ts (%v); the parser needs a look", len(methods), methods)
	}
	var funcs []string
	for _, m := range regexp.MustCompile(`(?m)^export declare function ([A-Za-z_$][A-Za-z0-9_$]*)`).FindAllStringSubmatch(src, -1) {
		funcs = append(funcs, m[1])
	}
	session := reflect.TypeOf(&engine.Session{})
	check := func(kind, name, goName string, ok bool) {
		switch {
		case !ok:
			t.Errorf("pi's %s %s has no row in the parity table: add its Go counterpart or say why there is none", kind, name)
		case strings.HasPrefix(goName, "not applicable: "):
		case strings.HasPrefix(goName, "Session."):
			if _, ok := session.MethodByName(strings.TrimPrefix(goName, "Session.")); !ok {
				t.Errorf("pi's %s maps to %s, which does not exist", name, goName)
			}
		default:
			if goFuncs[goName] == nil {
				t.Errorf("pi's %s maps to %s, which is not a known function", name, goName)
			}
		}
	}
	for _, m := range methods {
		g, ok := piParity[m]
		check("SessionManager method", m, g, ok)
	}
	for _, f := range funcs {
		g, ok := piModuleParity[f]
		check("module function", f, g, ok)
	}
	for m := range piParity {
		if !slices.Contains(methods, m) {
			t.Errorf("the parity table names %s, which pi's SessionManager no longer has", m)
		}
	}
}

func TestSetSessionFileAndLatestCompaction(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, []byte(followHeader+userLine("a", "", "one")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := engine.Create(t.Context(), "/w", engine.Options{Dir: dir, Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := s.SessionFile()
	if err := s.SetSessionFile(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	if s.SessionFile() != other || s.SessionID() != "f0000000-0000-4000-8000-000000000001" || s.Cwd() != "/w" {
		t.Errorf("after SetSessionFile: file %s, id %s, cwd %s", s.SessionFile(), s.SessionID(), s.Cwd())
	}
	if _, err := os.Stat(engine.LockPath(first)); err == nil {
		t.Error("the first, never written, session's lock file is still there")
	}
	if _, ok := s.LatestCompactionEntry(); ok {
		t.Error("a compaction where there is none")
	}
	at := time.UnixMilli(1)
	must[string](t)(s.AppendMessage(reply(at)))
	id := must[string](t)(s.AppendCompactionResult(compaction.Result{Summary: "sum", FirstKeptEntryID: "a", TokensBefore: 5}))
	must[string](t)(s.AppendMessage(message.NewUser("after", at)))
	if e, ok := s.LatestCompactionEntry(); !ok || e.ID != id {
		t.Errorf("LatestCompactionEntry = %v, %v; want %s", e, ok, id)
	}
	// The writer holds other.jsonl's lock now.
	if _, err := engine.Open(t.Context(), other, engine.Options{}); err == nil {
		t.Error("a second writer opened the switched-to file")
	}
	if err := s.SetSessionFile(t.Context(), filepath.Join(dir, "bad.jsonl")); err != nil {
		t.Fatal(err) // a missing file: a new session to be written there
	}
	if err := os.WriteFile(filepath.Join(dir, "corrupt.jsonl"), []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSessionFile(t.Context(), filepath.Join(dir, "corrupt.jsonl")); err == nil {
		t.Error("switched to a corrupt file")
	}
	if _, err := s.AppendMessage(message.NewUser("x", at)); err == nil {
		t.Error("a session whose switch failed still writes")
	}
}
