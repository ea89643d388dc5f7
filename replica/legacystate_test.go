package replica

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestLegacyStatePath: with places, the state file an older sessctl kept
// for the same store (named by AgentDir and AgentUseDir) is found, so the
// first sync after the change does not start from nothing; a directory
// store, which named other sessions then, gets none.
func TestLegacyStatePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pi := layout.Place{Name: layout.PlacePi, Format: layout.FormatJSONL, Root: "/home/u/.pi/agent/sessions"}
	ind := layout.Place{Name: layout.PlaceIndusagi, Format: layout.FormatJSONL, Root: "/home/u/.indusagi/agent/sessions"}
	au := layout.Place{Name: layout.PlaceAgentUse, Format: layout.FormatAgentUse, Root: "/home/u/.local/share/agentuse/project"}
	const remote = "s3://b/p"
	for _, tc := range []struct {
		places []layout.Place
		old    *Options
	}{
		{[]layout.Place{pi}, &Options{Remote: remote, AgentDir: "/home/u/.pi/agent"}},
		{[]layout.Place{ind}, &Options{Remote: remote, AgentDir: "/home/u/.indusagi/agent"}},
		{[]layout.Place{au}, &Options{Remote: remote, AgentUseDir: "/home/u/.local/share"}},
		{[]layout.Place{pi, ind, au}, &Options{Remote: remote, AgentDir: "/home/u/.pi/agent", AgentUseDir: "/home/u/.local/share"}},
		{[]layout.Place{{Name: "/x", Format: layout.FormatJSONL, Root: "/x"}, {Name: "/x", Format: layout.FormatAgentUse, Root: "/x"}}, nil},
	} {
		o := &Options{Remote: remote, Places: tc.places}
		got := legacyStatePath(dir, o)
		if tc.old == nil {
			if got != "" {
				t.Errorf("%v: legacy state %s, want none", tc.places, got)
			}
			continue
		}
		if want := statePath(dir, tc.old); got != want {
			t.Errorf("%v: legacy state %s, want %s", tc.places, got, want)
		}
		if got == statePath(dir, o) {
			t.Errorf("%v: the legacy state is the new one", tc.places)
		}
	}
	// loadState reads the legacy file while the new one does not exist.
	legacy := filepath.Join(dir, "old.json")
	if err := os.WriteFile(legacy, []byte(`{"remote":"`+remote+`","sessions":{"pi/a.jsonl":{}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := loadState(vfs.OS(), filepath.Join(dir, "new.json"), legacy, remote)
	if err != nil || len(st.Sessions) != 1 {
		t.Errorf("loadState = %+v, %v: want the legacy state's one session", st, err)
	}
}
