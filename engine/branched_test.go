package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/tree"
)

// TestCreateBranchedSessionAcrossLabels branches from a path that runs
// through label entries. createBranchedSession drops labels from the path
// and re-creates them at its end; pi keeps the parentId of the entry after
// a label, which then names an entry the new session does not have, so
// the branch (and the model context) broke at the label.
func TestCreateBranchedSessionAcrossLabels(t *testing.T) {
	t.Parallel()
	msg := func(role, text string) message.Message {
		return raw(string(jsonl.NewObject(64).String("role", role).String("content", text).Number("timestamp", 1).Bytes()))
	}
	label := func(s string) string { return s }
	cases := []struct {
		name  string
		build func(t *testing.T, s *engine.Session) (leaf string)
		want  []string // the branch of the new session: types and texts
		// relinked is how many copied entries got a new parentId; every
		// other copied entry keeps its bytes.
		relinked int
	}{
		{
			name: "label in the middle",
			build: func(t *testing.T, s *engine.Session) string {
				mustID(t)(s.AppendMessage(msg("user", "u1")))
				a1 := mustID(t)(s.AppendMessage(msg("assistant", "a1")))
				mustID(t)(s.AppendLabelChange(a1, label("checkpoint")))
				mustID(t)(s.AppendMessage(msg("user", "u2")))
				return mustID(t)(s.AppendMessage(msg("assistant", "a2")))
			},
			want:     []string{"message u1", "message a1", "message u2", "message a2", "label"},
			relinked: 1,
		},
		{
			name: "two labels in a row at the root",
			build: func(t *testing.T, s *engine.Session) string {
				u1 := mustID(t)(s.AppendMessage(msg("user", "u1")))
				s.ResetLeaf()
				mustID(t)(s.AppendLabelChange(u1, label("one")))
				mustID(t)(s.AppendLabelChange(u1, label("two")))
				return mustID(t)(s.AppendMessage(msg("assistant", "a1")))
			},
			want:     []string{"message a1"},
			relinked: 1,
		},
		{
			name: "no labels: the path is copied as it is",
			build: func(t *testing.T, s *engine.Session) string {
				mustID(t)(s.AppendMessage(msg("user", "u1")))
				return mustID(t)(s.AppendMessage(msg("assistant", "a1")))
			},
			want: []string{"message u1", "message a1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			s := inMemory(t, "/work", engine.StoreOptions{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
			leaf := tc.build(t, s)
			before := map[string]string{}
			for _, e := range s.Entries() {
				before[e.ID] = string(e.Raw)
			}
			if _, err := s.CreateBranchedSession(t.Context(), leaf); err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			for _, e := range s.Entries() {
				ids[e.ID] = true
			}
			for _, e := range s.Entries() {
				if e.ParentKind == jsonl.KindString && !ids[e.ParentID] {
					t.Errorf("entry %s names parent %s, which the branched session does not have", e.ID, e.ParentID)
				}
			}
			var got []string
			for _, e := range s.BranchPath("") {
				d := e.Type
				if m, ok := e.Field("message"); ok {
					c, _ := jsonl.Lookup(m, "content")
					txt, _ := jsonl.String(c)
					d += " " + txt
				}
				got = append(got, d)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("branch of the new session (-want +got):\n%s", diff)
			}
			changed := 0
			for _, e := range s.Entries() {
				if old, ok := before[e.ID]; ok && e.Type != jsonl.TypeLabel && old != string(e.Raw) {
					changed++
				}
			}
			if changed != tc.relinked {
				t.Errorf("%d copied entries changed, want %d re-linked", changed, tc.relinked)
			}
		})
	}
}

func mustID(t *testing.T) func(string, error) string {
	return func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

// TestBranchedSessionKeepsLabelTimes: the labels a branched session
// re-creates keep the times they were set at, as in pi 0.73.1 (0.58.3
// wrote the time of the copy), on disk and in memory, and ForkBranch
// (built the same way) too; a label entry without a timestamp is
// re-created without one. The tree reports each label's time.
func TestBranchedSessionKeepsLabelTimes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.jsonl")
	testenv.WriteFile(t, src, testenv.Lines(
		testenv.PiHeader,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`,
		`{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-03-01T10:00:03.000Z","targetId":"u1","label":"first"}`,
		`{"type":"label","id":"l2","parentId":"l1","timestamp":"2026-03-01T10:00:04.000Z","targetId":"u1","label":"renamed"}`,
		`{"type":"label","id":"l3","parentId":"l2","targetId":"a1","label":"no time"}`,
	))
	type lbl struct{ Target, Label, Timestamp string }
	labelsOf := func(es []*engine.Entry) []lbl {
		var out []lbl
		for _, e := range es {
			if e.Type != jsonl.TypeLabel {
				continue
			}
			target, _ := e.StringField("targetId")
			label, _ := e.StringField("label")
			ts, ok := e.Field("timestamp")
			if !ok {
				ts = []byte("<none>")
			}
			out = append(out, lbl{target, label, string(ts)})
		}
		return out
	}
	want := []lbl{{"u1", "renamed", `"2026-03-01T10:00:04.000Z"`}, {"a1", "no time", "<none>"}}
	late := func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }

	s, err := openStore(t, engine.StoreOptions{Now: late, Sync: engine.SyncNone}).Open(t.Context(), src, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]string{}
	tree.Walk(s.Tree(), func(n *tree.Node, _ int) bool {
		if n.HasLabel {
			times[n.Key] = string(n.LabelTimestamp)
		}
		return true
	}, nil)
	if diff := cmp.Diff(map[string]string{"u1": `"2026-03-01T10:00:04.000Z"`, "a1": ""}, times); diff != "" {
		t.Errorf("tree label times (-want +got):\n%s", diff)
	}
	fb, err := openStore(t, engine.StoreOptions{Now: late, Sync: engine.SyncNone}).Fork(t.Context(), src, engine.ForkOptions{At: "a1", Dir: filepath.Join(dir, "fork")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, labelsOf(fb.Entries())); diff != "" {
		t.Errorf("Fork's labels (-want +got):\n%s", diff)
	}
	fb.Close()
	file, err := s.CreateBranchedSession(t.Context(), "a1")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := engine.OpenFile(t.Context(), file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if diff := cmp.Diff(want, labelsOf(r.Entries())); diff != "" {
		t.Errorf("branched file's labels (-want +got):\n%s", diff)
	}

	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	m2 := inMemory(t, "/w", engine.StoreOptions{Now: func() time.Time { return at }})
	u1 := mustID(t)(m2.AppendMessage(raw(`{"role":"user","content":"q","timestamp":1}`)))
	l := "mark"
	mustID(t)(m2.AppendLabelChange(u1, l))
	at = at.Add(time.Hour)
	if _, err := m2.CreateBranchedSession(t.Context(), u1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]lbl{{u1, "mark", `"2026-05-01T00:00:00.000Z"`}}, labelsOf(m2.Entries())); diff != "" {
		t.Errorf("in memory (-want +got):\n%s", diff)
	}
}
