package compaction

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// contextView is what a context says, in comparable form.
type contextView struct {
	Messages      []string
	ThinkingLevel string
	Model         string
}

func viewContext(c Context) contextView {
	v := contextView{ThinkingLevel: string(c.ThinkingLevel), Model: string(c.Model)}
	for _, m := range c.Messages {
		v.Messages = append(v.Messages, string(m.Raw))
	}
	return v
}

// TestFromPathLoad checks that FromPathLoad over a path whose messages
// are detached builds FromPath's context, asking load for exactly the
// entries it reads: first the settings', then the context's.
func TestFromPathLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		path  *pathBuilder
		loads [][]string // the ids load is asked for, call by call
	}{
		{
			name:  "no compaction",
			path:  new(pathBuilder).user(5).asst(5, 10).modelChange().user(3),
			loads: [][]string{{"e0", "e1", "e3"}}, // the model is e2's, which has its bytes
		},
		{
			name: "compaction keeping two entries",
			path: new(pathBuilder).user(5).asst(5, 10).user(4).asst(4, 20).
				compaction("sum", "e2", "", false).user(3).asst(3, 30),
			loads: [][]string{{"e6"}, {"e2", "e3", "e5"}},
		},
		{
			name: "first kept entry not on the path",
			path: new(pathBuilder).user(5).modelChange().
				compaction("sum", "gone", "", false).user(3),
			loads: [][]string{{"e3"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := FromPath(tc.path.path(t))
			data := []byte(strings.Join(tc.path.lines, "\n") + "\n")
			p, err := jsonl.ParseReader(bytes.NewReader(data), 0, func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage })
			if err != nil {
				t.Fatal(err)
			}
			path := make([]*jsonl.Entry, len(p.Entries))
			for i := range p.Entries {
				path[i] = &p.Entries[i]
			}
			var loads [][]string
			got, err := FromPathLoad(path, func(es []*jsonl.Entry) error {
				var ids []string
				for _, e := range es {
					if !e.Detached() {
						t.Errorf("load asked for %s, which has its bytes", e.ID)
					}
					ids = append(ids, e.ID)
					off, n := e.Span()
					if err := e.Fill(data[off : off+int64(n)]); err != nil {
						return err
					}
				}
				loads = append(loads, ids)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(viewContext(want), viewContext(got)); diff != "" {
				t.Errorf("context differs from FromPath's (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.loads, loads); diff != "" {
				t.Errorf("loads (-want +got):\n%s", diff)
			}
			// A failing load ends the build with its error.
			p, _ = jsonl.ParseReader(bytes.NewReader(data), 0, func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage })
			for i := range p.Entries {
				path[i] = &p.Entries[i]
			}
			boom := errors.New("boom")
			if _, err := FromPathLoad(path, func([]*jsonl.Entry) error { return boom }); !errors.Is(err, boom) {
				t.Errorf("a failing load: got %v, want %v", err, boom)
			}
		})
	}
}
