package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// listIDsFiles are headers with each kind of id and parentSession a
// file may hold: what Info.ID and ParentSessionPath should say of them,
// and what pi's list() element says (the JSON passes them through).
var listIDsFiles = []struct {
	file, header     string
	id, parent       string
	idJSON, parentJS string // "" for parentJS: no parentSessionPath member
}{
	{"a.jsonl", `"id":"0199aaaa-0000-7000-8000-000000000001","parentSession":"/home/dev/.pi/p.jsonl"`,
		"0199aaaa-0000-7000-8000-000000000001", "/home/dev/.pi/p.jsonl", `"0199aaaa-0000-7000-8000-000000000001"`, `"/home/dev/.pi/p.jsonl"`},
	{"b.jsonl", `"id":42,"parentSession":7`, "42", "", `42`, `7`},
	{"c.jsonl", `"id":null,"parentSession":""`, "", "", `null`, `""`},
	{"d.jsonl", `"id":"<d&>"`, "<d&>", "", `"<d&>"`, ""},
}

// Info.ID and ParentSessionPath are plain strings, the same whether the
// listing read the files or the list index; the JSON element still
// passes a value of any type through as pi does.
func TestListIDsArePlainValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour) // old enough for the list index
	for _, f := range listIDsFiles {
		data := `{"type":"session","version":3,` + f.header + `,"timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n" +
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"in ` + f.file + `","timestamp":1772355601000}}` + "\n"
		path := filepath.Join(dir, f.file)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t, engine.StoreOptions{Dir: dir})
	for _, run := range []struct {
		name    string
		noIndex bool
	}{{"scan", true}, {"cold index", false}, {"warm index", false}} {
		infos, err := st.List(t.Context(), "/", engine.ListOptions{NoIndex: run.noIndex, EveryCwd: true})
		if err != nil {
			t.Fatal(err)
		}
		byFile := map[string]*engine.Info{}
		for i := range infos {
			byFile[filepath.Base(infos[i].Path)] = &infos[i]
		}
		for _, f := range listIDsFiles {
			in := byFile[f.file]
			if in == nil {
				t.Errorf("%s: %s not listed", run.name, f.file)
				continue
			}
			if in.ID != f.id || in.ParentSessionPath != f.parent {
				t.Errorf("%s: %s: ID %q, ParentSessionPath %q; want %q, %q", run.name, f.file, in.ID, in.ParentSessionPath, f.id, f.parent)
			}
			js, _ := in.MarshalJSON()
			if !strings.Contains(string(js), `"id":`+f.idJSON+`,`) {
				t.Errorf("%s: %s: element %s lacks \"id\":%s", run.name, f.file, js, f.idJSON)
			}
			if f.parentJS == "" && strings.Contains(string(js), `"parentSessionPath"`) ||
				f.parentJS != "" && !strings.Contains(string(js), `"parentSessionPath":`+f.parentJS+`,`) {
				t.Errorf("%s: %s: element %s, want parentSessionPath %s", run.name, f.file, js, f.parentJS)
			}
		}
	}
}

// A caller that sets ID or ParentSessionPath on its copy of an Info gets
// those values in the JSON element, not the ones read; clearing a parent
// leaves the member out.
func TestInfoJSONFollowsChangedIDs(t *testing.T) {
	t.Parallel()
	for _, f := range listIDsFiles[:3] {
		dir := t.TempDir()
		data := `{"type":"session","version":3,` + f.header + `,"timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, f.file), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(t.Context(), "/", engine.ListOptions{NoIndex: true, EveryCwd: true})
		if err != nil || len(infos) != 1 {
			t.Fatalf("%s: %d infos, %v", f.file, len(infos), err)
		}
		in := infos[0]
		in.ID, in.ParentSessionPath = "set by the caller", "/elsewhere/q.jsonl"
		js, _ := in.MarshalJSON()
		if !strings.Contains(string(js), `"id":"set by the caller",`) || !strings.Contains(string(js), `"parentSessionPath":"/elsewhere/q.jsonl",`) {
			t.Errorf("%s: changed fields not encoded: %s", f.file, js)
		}
		if f.id == "" || f.parent == "" {
			continue // "" is what was read: the JSON passes the value through
		}
		in.ID, in.ParentSessionPath = "", ""
		js, _ = in.MarshalJSON()
		if !strings.Contains(string(js), `"id":"",`) || strings.Contains(string(js), `"parentSessionPath"`) {
			t.Errorf("%s: cleared fields: %s", f.file, js)
		}
	}
}
