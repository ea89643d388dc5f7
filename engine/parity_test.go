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
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// piParity maps every public member of pi's SessionManager (instance and
// static) to its Go counterpart: "Session.Name" or "Store.Name" (a
// method, checked to exist), "pkg.Name" (a package function, listed in
// goFuncs), or "not applicable: why".
var piParity = map[string]string{
	"setSessionFile":            "not applicable: a Session is the handle of one file; Store.Open opens another",
	"newSession":                "Session.NewSession",
	"isPersisted":               "Session.IsPersisted",
	"getCwd":                    "Session.Cwd",
	"getSessionDir":             "not applicable: the session directory is the file's (Session.SessionFile), or the Dir given to Store.Create or Store.Open",
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
	"getLeafId":                 "Session.LeafID",
	"getLeafEntry":              "not applicable: Session.Entry of Session.LeafID",
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
	"create":                    "Store.Create",
	"open":                      "Store.Open",
	"continueRecent":            "Store.ContinueRecent",
	"inMemory":                  "Store.Create",
	"forkFrom":                  "Store.Fork",
	"list":                      "Store.List",
	"listAll":                   "Store.List",
	"usesDefaultSessionDir":     "not applicable: a Store knows whether it was opened on an agent's directory or a Dir",
	"appendUsage":               "Session.AppendUsage",
	"appendContextEdit":         "Session.AppendContextEdit",
	"buildContextEntries":       "not applicable: the context's entries are those of Session.Context's messages (compaction.Message.Entry)",
	"buildSessionProjection":    "Session.Context",
	"getEntryCount":             "not applicable: len(Session.Entries); a Session does not copy its entries for it",
	"findById":                  "Store.Resolve",
}

// piModuleParity maps the functions session-manager exports beside the
// class.
var piModuleParity = map[string]string{
	"getLatestCompactionEntry":      "compaction.LatestCompactionEntry",
	"buildSessionContext":           "compaction.Build",
	"findMostRecentSession":         "Store.ContinueRecent",
	"getDefaultSessionDir":          "layout.DefaultSessionDir",
	"migrateSessionEntries":         "not applicable: migration is package migrate's (migrate.Entries), applied by Open",
	"parseSessionEntries":           "not applicable: parsing is internal (internal/jsonl), applied by Open",
	"loadEntriesFromFile":           "not applicable: loading is internal, applied by Open (Session.Entries gives the result)",
	"assertValidSessionId":          "not applicable: Store.Create checks an id with layout.CheckName",
	"sessionEntryToContextMessages": "not applicable: internal to compaction.Build (the projection)",
	"buildContextEntries":           "not applicable: internal to compaction.Build (the projection)",
	"projectContextEntry":           "not applicable: internal to compaction.Build (a context edit applied)",
	"buildSessionProjection":        "compaction.Build",
}

// goFuncs are the package functions the tables may name.
var goFuncs = map[string]any{
	"compaction.LatestCompactionEntry": compaction.LatestCompactionEntry, "compaction.Build": compaction.Build,
	"layout.DefaultSessionDir": layout.DefaultSessionDir,
}

// TestPiSessionManagerParity lists the public methods of the reference
// pi's SessionManager (and the functions its module exports) from its
// .d.ts and checks that each has a Go counterpart or says why not, so a
// method a new pi adds is noticed.
func TestPiSessionManagerParity(t *testing.T) {
	t.Parallel()
	_, modules := testenv.Pi(t)
	data, err := os.ReadFile(filepath.Join(testenv.PiPackageDir(modules), "dist", "core", "session-manager.d.ts"))
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
	session, store := reflect.TypeOf(&engine.Session{}), reflect.TypeOf(&engine.Store{})
	check := func(kind, name, goName string, ok bool) {
		switch {
		case !ok:
			t.Errorf("pi's %s %s has no row in the parity table: add its Go counterpart or say why there is none", kind, name)
		case strings.HasPrefix(goName, "not applicable: "):
		case strings.HasPrefix(goName, "Session."):
			if _, ok := session.MethodByName(strings.TrimPrefix(goName, "Session.")); !ok {
				t.Errorf("pi's %s maps to %s, which does not exist", name, goName)
			}
		case strings.HasPrefix(goName, "Store."):
			if _, ok := store.MethodByName(strings.TrimPrefix(goName, "Store.")); !ok {
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

// TestLatestCompaction: pi's getLatestCompactionEntry of the leaf's
// branch is compaction.LatestCompactionEntry of Session.BranchPath; and a
// session never written leaves no lock file when it is closed.
func TestLatestCompaction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})
	unwritten, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := unwritten.SessionFile()
	if err := unwritten.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sessionfile.LockPath(first)); err == nil {
		t.Error("the first, never written, session's lock file is still there")
	}
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := compaction.LatestCompactionEntry(s.BranchPath("")); ok {
		t.Error("a compaction where there is none")
	}
	at := time.UnixMilli(1)
	a := must[string](t)(s.AppendMessage(reply(at)))
	id := must[string](t)(s.AppendCompaction(engine.Compaction{Summary: "sum", FirstKeptEntryID: a, TokensBefore: 5}))
	must[string](t)(s.AppendMessage(message.NewUser("after", at)))
	if e, ok := compaction.LatestCompactionEntry(s.BranchPath("")); !ok || e.ID != id {
		t.Errorf("LatestCompactionEntry = %v, %v; want %s", e, ok, id)
	}
}
