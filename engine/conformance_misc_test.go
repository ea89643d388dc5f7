package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout"
)

func piCaseNamed(t *testing.T, name string) piCase {
	t.Helper()
	for _, c := range loadPiCases(t) {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("conformance case %s missing", name)
	return piCase{}
}

// infosJSON renders infos as pi's list() JSON, normalised.
func infosJSON(t *testing.T, infos []engine.Info, root string) any {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range infos {
		if i > 0 {
			buf.WriteString(",")
		}
		render.Info(&buf, &infos[i])
	}
	buf.WriteString("]")
	return normalise(t, buf.Bytes(), root, nil)
}

func setMtimes(t *testing.T, dir string, mt time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, mt, mt)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPiConformanceListDir(t *testing.T) {
	t.Parallel()
	c := piCaseNamed(t, "list-dir")
	root := copyTree(t, c.dir)
	dir := filepath.Join(root, c.exp["sessionDir"].(string))
	mt, _ := time.Parse(time.RFC3339Nano, c.exp["mtimeOfAllFiles"].(string))
	setMtimes(t, dir, mt)
	var calls []any
	// pi 0.58.3 listed a directory whatever its sessions' cwd (EveryCwd).
	infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/ignored", engine.ListOptions{EveryCwd: true, Progress: func(done, total int) {
		calls = append(calls, []any{float64(done), float64(total)})
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, got := withoutChangedMembers(t, c.name, c.exp["list"], infosJSON(t, infos, root))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list differs (-pi +sessctl):\n%s", diff)
	}
	if diff := cmp.Diff(c.exp["progressCalls"], any(calls)); diff != "" {
		t.Errorf("progress calls differ (-pi +sessctl):\n%s", diff)
	}
}

func TestPiConformanceListAll(t *testing.T) {
	t.Parallel()
	c := piCaseNamed(t, "list-all")
	root := copyTree(t, c.dir)
	infos, err := openStore(t, engine.StoreOptions{AgentDir: filepath.Join(root, "agent")}).List(context.Background(), "", engine.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.exp["list"], infosJSON(t, infos, root)); diff != "" {
		t.Errorf("listAll differs (-pi +sessctl):\n%s", diff)
	}
}

func TestPiConformanceContinueRecent(t *testing.T) {
	t.Parallel()
	c := piCaseNamed(t, "continue-recent")
	root := copyTree(t, c.dir)
	dir := filepath.Join(root, c.exp["sessionDir"].(string))
	for name, v := range c.exp["mtimes"].(map[string]any) {
		mt, _ := time.Parse(time.RFC3339Nano, v.(string))
		if err := os.Chtimes(filepath.Join(dir, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	// continueRecent opens the file findMostRecentSession picks, with
	// the caller's cwd.
	s, err := openStore(t, engine.StoreOptions{Dir: dir}).ContinueRecent(context.Background(), "/home/user/project", engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.SessionFile(); rootRel(got, root) != c.exp["findMostRecentSession"] {
		t.Errorf("ContinueRecent opened %q; pi's findMostRecentSession picked %v", got, c.exp["findMostRecentSession"])
	}
	st := stateOf(t, s, nil, root, nil)
	s.Close()
	compareState(t, "continueRecentState", c.exp["continueRecentState"].(map[string]any), st, "sessionInfo")
	if st["sessionFile"] != c.exp["continueRecentOpened"] {
		t.Errorf("continueRecent opened %v, want %v", st["sessionFile"], c.exp["continueRecentOpened"])
	}
	// An empty directory gives a new, unwritten session there.
	empty := map[string]any(c.exp["emptyDirContinueRecent"].(map[string]any))
	start, _ := time.Parse(time.RFC3339Nano, c.exp["clockStart"].(string))
	hdr := empty["header"].(map[string]any)
	s2, err := openStore(t, engine.StoreOptions{
		Dir: filepath.Join(root, "empty-dir"), Now: func() time.Time { return start },
		NewSessionID: func() string { return hdr["id"].(string) }, Sync: engine.SyncNone,
	}).ContinueRecent(context.Background(), "/home/user/project", engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if f := rootRel(s2.SessionFile(), root); f != empty["sessionFile"] {
		t.Errorf("empty dir: session file %s, want %v", f, empty["sessionFile"])
	}
	if _, err := os.Stat(s2.SessionFile()); err == nil {
		t.Errorf("empty dir: the new session was written before its first assistant message")
	}
	var h map[string]any
	_ = json.Unmarshal(s2.Header().Raw, &h)
	if diff := cmp.Diff(hdr, h); diff != "" {
		t.Errorf("empty dir: header differs:\n%s", diff)
	}
}

func TestPiConformanceDirEncoding(t *testing.T) {
	t.Parallel()
	c := piCaseNamed(t, "dir-encoding")
	for _, row := range c.exp["table"].([]any) {
		r := row.(map[string]any)
		cwd := r["cwd"].(string)
		if got := layout.CwdDirName(cwd); got != r["dirName"] {
			t.Errorf("CwdDirName(%q) = %q, want %q", cwd, got, r["dirName"])
		}
		ts, _ := time.Parse(time.RFC3339Nano, r["headerTimestamp"].(string))
		if got := layout.SessionFileName(ts, r["sessionId"].(string)); got != r["sessionFileName"] {
			t.Errorf("SessionFileName = %q, want %q", got, r["sessionFileName"])
		}
		// And through the API: Create puts the file in that directory.
		agent := t.TempDir()
		s, err := openStore(t, engine.StoreOptions{AgentDir: agent, Now: func() time.Time { return ts }, NewSessionID: func() string { return r["sessionId"].(string) }}).Create(context.Background(), cwd, engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(agent, "sessions", r["dirName"].(string), r["sessionFileName"].(string))
		if resolved := layout.ResolvePath(cwd); resolved != cwd {
			// pi 1.x encodes the resolved cwd (relative ones against the
			// process's directory, trailing separators dropped); the
			// corpus's 0.58.3 encoded it as given.
			corpus := want
			want = filepath.Join(agent, "sessions", layout.CwdDirName(resolved), r["sessionFileName"].(string))
			if want == corpus {
				t.Errorf("Create(%q): the resolved cwd %q encodes as the corpus's; list it no more as changed", cwd, resolved)
			}
		}
		if s.SessionFile() != want {
			t.Errorf("Create(%q) file %s, want %s", cwd, s.SessionFile(), want)
		}
		s.Close()
	}
}

// TestPiConformanceAppendAfterBadTail covers the case where pi loses data:
// appending after a last line without '\n' glues the new entry onto it.
// sessctl's documented behaviour instead: at the first write (not at the
// write-mode open, which changes nothing) a torn last line is copied to
// <file>.torn-<ms> and cut off, and a complete last line gets its newline,
// so every entry survives the reload.
func TestPiConformanceAppendAfterBadTail(t *testing.T) {
	t.Parallel()
	c := piCaseNamed(t, "append-after-bad-tail")
	root := copyTree(t, c.dir)
	for name, want := range c.exp["loadsBeforeAppend"].(map[string]any) {
		loadCompare(t, c, root, name, want.(map[string]any), false)
	}
	for _, o := range c.exp["ops"].([]any) {
		op := o.(map[string]any)
		args := op["args"].(map[string]any)
		name := args["file"].(string)
		path := filepath.Join(root, name)
		before, _ := os.ReadFile(path)
		wantBefore := c.exp["loadsBeforeAppend"].(map[string]any)[name].(map[string]any)
		s, err := openStore(t, engine.StoreOptions{NewEntryID: func() string { return op["result"].(string) }, Sync: engine.SyncNone}).Open(context.Background(), path, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
			t.Errorf("%s: the write-mode open changed the file", name)
		}
		msg, _ := json.Marshal(args["message"])
		id, err := s.AppendMessage(raw(msg))
		if err != nil {
			t.Fatal(err)
		}
		rec := s.Recovery() // the first write repaired the tail
		s.Close()
		s2, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []any
		for _, e := range s2.Entries() {
			ids = append(ids, e.ID)
		}
		leaf, _ := s2.LeafID()
		s2.Close()
		var wantIDs []any
		for _, e := range wantBefore["entries"].([]any) {
			wantIDs = append(wantIDs, e.(map[string]any)["id"])
		}
		wantIDs = append(wantIDs, id)
		if diff := cmp.Diff(wantIDs, ids); diff != "" {
			t.Errorf("%s: entries after append (-want +got):\n%s", name, diff)
		}
		if leaf != id {
			t.Errorf("%s: leaf after reload %s, want the appended %s", name, leaf, id)
		}
		switch name {
		case "truncated-tail.jsonl":
			frag := before[bytes.LastIndexByte(before, '\n')+1:]
			q, err := os.ReadFile(rec.Quarantine)
			if err != nil || !bytes.Equal(q, frag) || rec.TornBytes != len(frag) {
				t.Errorf("%s: torn tail not quarantined: %+v, %q", name, rec, q)
			}
		case "no-final-newline.jsonl":
			if !rec.NewlineAdded {
				t.Errorf("%s: recovery %+v, want NewlineAdded", name, rec)
			}
		}
	}
}

// rootRel is path with the case's root replaced by /__ROOT__ and '/'
// separators, as in pi's recordings (made on Linux).
func rootRel(path, root string) string {
	return filepath.ToSlash(strings.ReplaceAll(path, root, "/__ROOT__"))
}
