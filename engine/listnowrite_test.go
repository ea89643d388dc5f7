package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// A listing writes nothing: List and Sessions of a working directory
// that has no session directory yet create none (pi's list creates it,
// sessctl list --cwd DIR used to leave an empty --<cwd>-- behind).
func TestListingCreatesNothing(t *testing.T) {
	t.Parallel()
	for _, noIndex := range []bool{false, true} {
		agent := filepath.Join(t.TempDir(), "agent")
		o := engine.ListOptions{NoIndex: noIndex}
		st := openStore(t, engine.StoreOptions{AgentDir: agent})
		got, err := st.List(t.Context(), "/home/dev/proj", o)
		if err != nil || len(got) != 0 {
			t.Fatalf("List: %v, %v; want nothing", got, err)
		}
		for info, err := range st.Sessions(t.Context(), "/home/dev/proj", o) {
			t.Fatalf("Sessions gave %v, %v; want nothing", info, err)
		}
		if _, err := os.Lstat(agent); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the listing (NoIndex %v) created %s (%v)", noIndex, agent, err)
		}
	}
}
