package engine_test

// The pi conformance test: every case of ../shared/conformance/pi is
// loaded (every "loads" state compared field by field) and every scenario
// is replayed through the Go API with the corpus's ids and clock, giving
// the same live states and byte-identical files. Where a case records a pi
// bug that sessctl deliberately does not reproduce, the test asserts the
// documented behaviour instead and says so.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
)

type piCase struct {
	name string
	dir  string
	exp  map[string]any
	raw  []byte
}

func loadPiCases(t *testing.T) []piCase {
	t.Helper()
	root := filepath.Join(testenv.Corpus(t, "pi"), "cases")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []piCase
	for _, d := range ents {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		var exp map[string]any
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, piCase{name: d.Name(), dir: dir, exp: exp, raw: raw})
	}
	if len(out) == 0 {
		t.Fatal("no conformance cases found")
	}
	return out
}

// copyTree copies the case directory into a fresh temp dir (the /__ROOT__
// of the case) and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// normalise turns our JSON into comparable data: the temp dir becomes
// /__ROOT__, and ids in rename become their placeholders.
func normalise(t *testing.T, data []byte, root string, rename map[string]string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("our output is not JSON: %v\n%s", err, data)
	}
	return mapStrings(v, func(s string) string {
		if r, ok := rename[s]; ok {
			return r
		}
		s = strings.ReplaceAll(s, root, "/__ROOT__")
		if strings.HasPrefix(s, "/__ROOT__") {
			s = filepath.ToSlash(s) // pi's expected paths have '/' (Windows: '\')
		}
		return s
	})
}

func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = mapStrings(x[i], f)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[f(k)] = mapStrings(val, f)
		}
		return out
	}
	return v
}

// stateOf writes a session's state object (with contextByLeaf) and
// normalises it.
func stateOf(t *testing.T, s *engine.Session, info *engine.Info, root string, rename map[string]string) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	o := render.StateOptions{ContextByLeaf: true, Info: info, NoInfo: info == nil}
	if err := render.State(&buf, s, o); err != nil {
		t.Fatal(err)
	}
	return normalise(t, buf.Bytes(), root, rename).(map[string]any)
}

// compareState compares the fields expected holds (a state object) with
// ours; skip names fields not to compare. Values pi 0.73.1 changed are
// checked by changed; tree nodes are compared without their
// labelTimestamp, which 0.58.3's lack.
func compareState(t *testing.T, label string, expected, got map[string]any, skip ...string) {
	t.Helper()
	fields := map[string]bool{"sessionId": true, "sessionFile": true, "sessionDir": true, "cwd": true,
		"isPersisted": true, "header": true, "leafId": true, "leafEntryId": true, "sessionName": true,
		"entries": true, "branch": true, "tree": true, "children": true, "labels": true, "context": true,
		"contextByLeaf": true, "contextAtNullLeaf": true, "sessionInfo": true}
	meta := map[string]bool{}
	for _, k := range skip {
		meta[k] = true
	}
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if meta[k] || !fields[k] {
			continue // harness notes (file, opsNote, ...) are not state
		}
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: field %q missing from our state", label, k)
			continue
		}
		if k == "tree" {
			g = withoutLabelTimestamps(k, g) // 0.58.3's tree nodes have none
		}
		if changed(t, label+" "+k, expected[k], g) {
			continue
		}
		if diff := cmp.Diff(expected[k], g); diff != "" {
			t.Errorf("%s: field %q differs (-pi +sessctl):\n%s", label, k, diff)
		}
	}
}

// placeholderIDs maps our migrated ids to @IDn (n-th non-header entry).
func placeholderIDs(s *engine.Session) map[string]string {
	m := map[string]string{}
	for i, e := range s.Entries() {
		m[e.ID] = fmt.Sprintf("@ID%d", i+1)
	}
	return m
}

var fixedMtime = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// loadCompare opens a corpus file read-only in root and compares its state.
func loadCompare(t *testing.T, c piCase, root, name string, want map[string]any, legacy bool) *engine.Session {
	t.Helper()
	path := filepath.Join(root, name)
	if err := os.Chtimes(path, fixedMtime, fixedMtime); err != nil {
		t.Fatal(err)
	}
	info := infoOf(t, path)
	before, _ := os.ReadFile(path)
	s, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: open %s: %v", c.name, name, err)
	}
	t.Cleanup(func() { s.Close() })
	rename := map[string]string{}
	if legacy {
		rename = placeholderIDs(s)
	}
	// pi falls back to the process working directory for a header without
	// cwd; the corpus was generated with the case directory as cwd.
	if wd, err := os.Getwd(); err == nil {
		rename[wd] = "/__ROOT__"
	}
	got := stateOf(t, s, info, root, rename)
	compareState(t, c.name+"/"+name, want, got)
	if l, ok := want["labelOfMissingTarget"]; ok {
		gl, has := s.Label("ghost123")
		var g any
		if has {
			g = gl
		}
		if diff := cmp.Diff(l, g); diff != "" {
			t.Errorf("%s: label of missing target differs:\n%s", name, diff)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("%s: a read-only open modified %s", c.name, name)
	}
	return s
}

// isLegacy reports whether a file is version 1 (its ids are generated).
func isLegacy(data []byte) bool {
	p := jsonl.ParseFile(data)
	if len(p.Entries) == 0 {
		return false
	}
	v, ok := p.Entries[0].Field("version")
	return !ok || string(v) == "1"
}

func TestPiConformanceLoads(t *testing.T) {
	t.Parallel()
	for _, c := range loadPiCases(t) {
		loads, _ := c.exp["loads"].(map[string]any)
		if len(loads) == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, c.dir)
			names := make([]string, 0, len(loads))
			for n := range loads {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				want := loads[name].(map[string]any)
				if c.name == "corrupt-or-empty" {
					checkCorruptLoad(t, c, root, name, want)
					continue
				}
				data, err := os.ReadFile(filepath.Join(root, name))
				if err != nil {
					t.Fatal(err)
				}
				legacy := isLegacy(data)
				loadCompare(t, c, root, name, want, legacy)
				if rw, _ := want["rewrittenOnLoad"].(bool); rw {
					checkMigrationRewrite(t, c, root, name, want, legacy)
				}
			}
		})
	}
}

// checkCorruptLoad asserts sessctl's documented behaviour for files pi
// truncates (corrupt-or-empty): pi overwrites a file without a valid header
// with a fresh one, destroying its content. sessctl refuses with a
// corruption error naming the file and line and leaves the file alone. An
// empty file holds nothing to lose, so a write-mode open gives it a fresh
// header as pi does.
func checkCorruptLoad(t *testing.T, c piCase, root, name string, want map[string]any) {
	t.Helper()
	path := filepath.Join(root, name)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The listing fields are pi's (list() never truncates).
	if err := os.Chtimes(path, fixedMtime, fixedMtime); err != nil {
		t.Fatal(err)
	}
	info := infoOf(t, path)
	var gotInfo any
	if info != nil {
		var buf bytes.Buffer
		render.Info(&buf, info)
		gotInfo = normalise(t, buf.Bytes(), root, nil)
	}
	if diff := cmp.Diff(want["sessionInfo"], gotInfo); diff != "" {
		t.Errorf("%s: sessionInfo differs (-pi +sessctl):\n%s", name, diff)
	}
	s, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{})
	if len(bytes.TrimSpace(before)) == 0 {
		if err != nil {
			t.Fatalf("%s: write-mode open of an empty file: %v", name, err)
		}
		// The open changes nothing (pi writes the header at once); the
		// first write, or Flush, writes the header first.
		if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
			t.Errorf("%s: the write-mode open changed the file: %q", name, now)
		}
		if err := s.Flush(); err != nil {
			t.Fatalf("%s: flush: %v", name, err)
		}
		id := s.SessionID()
		s.Close()
		after, _ := os.ReadFile(path)
		var h map[string]any
		if err := json.Unmarshal(after, &h); err != nil || h["type"] != "session" || h["version"] != float64(3) || h["id"] != id {
			t.Errorf("%s: empty file should get one fresh header with id %s, got %q", name, id, after)
		}
		// A reopen keeps that session (pi: reopenRecoveredEmpty).
		s2, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s2.SessionID() != id {
			t.Errorf("%s: reopen gave session %s, want %s", name, s2.SessionID(), id)
		}
		s2.Close()
		again, _ := os.ReadFile(path)
		if !bytes.Equal(after, again) {
			t.Errorf("%s: reopening the recovered file rewrote it", name)
		}
		return
	}
	// Deliberate difference: no truncation.
	if err == nil {
		s.Close()
		t.Fatalf("%s: open of a file without a valid header succeeded; want a corruption error", name)
	}
	var ce *engine.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, engine.ErrCorrupt) || ce.Path != path || ce.Line < 1 {
		t.Errorf("%s: want *CorruptError naming %s and a line, got %v", name, path, err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("%s: error %q does not name the file", name, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("%s: open modified a corrupt file", name)
	}
	if _, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{ReadOnly: true}); !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("%s: read-only open: want ErrCorrupt, got %v", name, err)
	}
}

// checkMigrationRewrite opens a legacy file for writing and compares the
// rewritten bytes with pi's after-load file, ids mapped to @IDn; the
// original is kept byte for byte as <file>.v<N>.bak, and a second open
// changes nothing.
func checkMigrationRewrite(t *testing.T, c piCase, root, name string, want map[string]any, legacy bool) {
	t.Helper()
	src := filepath.Join(root, name)
	work := filepath.Join(t.TempDir(), name)
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(work, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := engine.OpenFile(context.Background(), work, engine.OpenOptions{})
	if err != nil {
		t.Fatalf("write-mode open of %s: %v", name, err)
	}
	// The open migrates in memory only; the first write (here Flush)
	// rewrites the file, with the same entries.
	if now, _ := os.ReadFile(work); !bytes.Equal(now, orig) {
		t.Errorf("%s: the write-mode open changed the file", name)
	}
	inMemory := entryLines(s)
	if err := s.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", name, err)
	}
	if diff := cmp.Diff(inMemory, entryLines(s)); diff != "" {
		t.Errorf("%s: entries after the migration rewrite differ from the ones migrated in memory (-before +after):\n%s", name, diff)
	}
	rename := map[string]string{}
	if legacy {
		rename = placeholderIDs(s)
	}
	rec := s.Recovery()
	s.Close()
	got, _ := os.ReadFile(work)
	mapped := string(got)
	for id, ph := range rename {
		mapped = strings.ReplaceAll(mapped, `"`+id+`"`, `"`+ph+`"`)
	}
	wantBytes, err := os.ReadFile(filepath.Join(c.dir, want["afterLoadFile"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if mapped != string(wantBytes) {
		t.Errorf("%s: migrated file differs from pi's:\n got %s\nwant %s", name, mapped, wantBytes)
	}
	if !rec.Migrated || rec.Backup == "" {
		t.Errorf("%s: recovery %+v: want Migrated with a backup", name, rec)
	} else if bak, _ := os.ReadFile(rec.Backup); !bytes.Equal(bak, orig) {
		t.Errorf("%s: backup %s is not the original byte for byte", name, rec.Backup)
	}
	s2, err := engine.OpenFile(context.Background(), work, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Recovery().Migrated {
		t.Errorf("%s: second open migrated again", name)
	}
	var ids []string
	for _, e := range s2.Entries() {
		if r, ok := rename[e.ID]; ok {
			ids = append(ids, r)
		} else {
			ids = append(ids, e.ID)
		}
	}
	s2.Close()
	again, _ := os.ReadFile(work)
	if !bytes.Equal(again, got) {
		t.Errorf("%s: second open rewrote the migrated file", name)
	}
	if r, ok := c.exp["reloadAfterMigration"].(map[string]any); ok {
		var wantIDs []string
		for _, x := range r["entryIds"].([]any) {
			wantIDs = append(wantIDs, x.(string))
		}
		if diff := cmp.Diff(wantIDs, ids); diff != "" {
			t.Errorf("%s: ids after reload differ:\n%s", name, diff)
		}
	}
	// Determinism: migrating a second copy gives the same bytes.
	work2 := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(work2, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	s3, err := engine.OpenFile(context.Background(), work2, engine.OpenOptions{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s3.Flush(); err != nil {
		t.Fatal(err)
	}
	s3.Close()
	got2, _ := os.ReadFile(work2)
	if !bytes.Equal(got, got2) {
		t.Errorf("%s: migrating two copies gave different bytes", name)
	}
}

var fileNameRe = regexp.MustCompile(`_([^_/]+)\.jsonl$`)

// idFromFile extracts the session id from <ts>_<id>.jsonl.
func idFromFile(p string) string {
	m := fileNameRe.FindStringSubmatch(p)
	if m == nil {
		return ""
	}
	return m[1]
}

// entryLines returns the header and entry lines of a session.
func entryLines(s *engine.Session) []string {
	out := []string{string(s.Header().Raw)}
	for _, e := range s.Entries() {
		out = append(out, string(e.Raw))
	}
	return out
}
