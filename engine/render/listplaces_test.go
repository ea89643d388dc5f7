package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
)

// TestListPlacesJSONSeq checks the one array of both formats: the JSONL
// sessions first, then the AgentUse ones, valid JSON when either or both
// are missing.
func TestListPlacesJSONSeq(t *testing.T) {
	t.Parallel()
	infos := func(ins ...engine.Info) func(yield func(*engine.Info, error) bool) {
		return func(yield func(*engine.Info, error) bool) {
			for i := range ins {
				if !yield(&ins[i], nil) {
					return
				}
			}
		}
	}
	aus := []*agentuse.Info{{ID: "01AU", Dir: "/au/01AU-main"}}
	for _, c := range []struct {
		name  string
		seq   func(yield func(*engine.Info, error) bool)
		aus   []*agentuse.Info
		paths []string
	}{
		{"both", infos(engine.Info{Path: "/s/a.jsonl", ID: "a"}), aus, []string{"/s/a.jsonl", "/au/01AU-main"}},
		{"agentuse only", infos(), aus, []string{"/au/01AU-main"}},
		{"jsonl only", infos(engine.Info{Path: "/s/a.jsonl", ID: "a"}), nil, []string{"/s/a.jsonl"}},
		{"none", infos(), nil, nil},
	} {
		var b strings.Builder
		for part := range ListPlacesJSONSeq(c.seq, c.aus, func(err error) { t.Error(err) }) {
			for _, p := range part {
				b.Write(p)
			}
		}
		var got []struct{ Path, Dir string }
		if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("%s: %v in %q", c.name, err, b.String())
		}
		var paths []string
		for _, g := range got {
			paths = append(paths, g.Path+g.Dir)
		}
		if strings.Join(paths, " ") != strings.Join(c.paths, " ") {
			t.Errorf("%s: %q, want %q", c.name, paths, c.paths)
		}
	}
}
