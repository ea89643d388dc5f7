package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// TestCreateBranchedSessionAcrossLabels branches from a path that runs
// through label entries. createBranchedSession drops labels from the path
// and re-creates them at its end; pi keeps the parentId of the entry after
// a label, which then names an entry the new session does not have, so
// the branch (and the model context) broke at the label.
func TestCreateBranchedSessionAcrossLabels(t *testing.T) {
	msg := func(role, text string) json.RawMessage {
		return jsonl.NewObject(64).String("role", role).String("content", text).Number("timestamp", 1).Bytes()
	}
	label := func(s string) *string { return &s }
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
			clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			s := engine.InMemory("/work", engine.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
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
