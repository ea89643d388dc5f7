package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// A write whose entry would hang from a parent-id loop is refused: pi
// walks the parent chain from the last line when it opens a session and
// never finishes on a loop. x and y are each other's parent; z is its own;
// c hangs below the loop; r is a plain root.
func TestWriteRefusesParentLoops(t *testing.T) {
	t.Parallel()
	body := msgLine("r", "", `"root"`) + msgLine("x", "y", `"x"`) + msgLine("y", "x", `"y"`) +
		msgLine("z", "z", `"self"`) + msgLine("c", "x", `"below"`)
	cases := []struct {
		name  string
		write func(s *engine.Session) error
		at    string // the loop entry the error names; "" when the write is fine
	}{
		{"append from a leaf below a loop", func(s *engine.Session) error {
			_, err := s.AppendMessage(raw(`{"role":"user","content":"hi"}`))
			return err
		}, "x"},
		{"label from a leaf below a loop", func(s *engine.Session) error {
			_, err := s.AppendLabelChange("r", "l")
			return err
		}, "x"},
		{"compaction from a leaf below a loop", func(s *engine.Session) error {
			_, err := s.AppendCompaction(engine.Compaction{Summary: "s", FirstKeptEntryID: "c"})
			return err
		}, "x"},
		{"branch with summary onto a loop entry", func(s *engine.Session) error {
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: "y", Summary: "s"})
			return err
		}, "y"},
		{"branch with summary onto a self-parent", func(s *engine.Session) error {
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: "z", Summary: "s"})
			return err
		}, "z"},
		{"branch onto a loop entry, then append", func(s *engine.Session) error {
			if err := s.Branch("y"); err != nil {
				return err
			}
			_, err := s.AppendSessionInfo("n")
			return err
		}, "y"},
		{"branched session from a loop entry", func(s *engine.Session) error {
			_, err := s.CreateBranchedSession(context.Background(), "c")
			return err
		}, "x"},
		{"branch with summary onto a plain entry", func(s *engine.Session) error {
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: "r", Summary: "s"})
			return err
		}, ""},
		{"reset leaf, then append", func(s *engine.Session) error {
			s.ResetLeaf()
			_, err := s.AppendMessage(raw(`{"role":"user","content":"fresh root"}`))
			return err
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := writeSession(t, body)
			before, _ := os.ReadFile(p)
			s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = c.write(s)
			after, _ := os.ReadFile(p)
			if c.at == "" {
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				if openRO(t, p).Context().Messages == nil {
					t.Error("no context after the write")
				}
				return
			}
			var le *engine.LoopError
			if !errors.As(err, &le) || !errors.Is(err, engine.ErrCorrupt) {
				t.Fatalf("write: %v, want a *LoopError", err)
			}
			if le.Path != p || le.At != c.at || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "entry "+c.at) {
				t.Errorf("error %q (%+v): want it to name %s and entry %s", err, le, p, c.at)
			}
			if string(after) != string(before) {
				t.Errorf("the file changed:\n%s", after)
			}
		})
	}
}
