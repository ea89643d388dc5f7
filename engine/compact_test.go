package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
)

func compactSession(t *testing.T, messages int) *engine.Session {
	t.Helper()
	n := 0
	s := inMemory(t, "/p", engine.StoreOptions{NewEntryID: func() string { n++; return fmt.Sprintf("e%07d", n) }})
	for i := range messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := strings.Repeat("word ", 400)
		if _, err := s.AppendMessage(raw(fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":%q}],"timestamp":%d}`, role, text, 1772355600000+i))); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestSummarizeBranch(t *testing.T) {
	t.Parallel()
	s := compactSession(t, 4)
	// Moving to the leaf abandons nothing; moving to the first entry
	// abandons the rest.
	if _, ok, err := s.SummarizeBranch(context.Background(), "e0000004", compaction.Offline{}, ""); ok || err != nil {
		t.Errorf("to the leaf itself: ok %v, %v; want nothing to summarise", ok, err)
	}
	res, ok, err := s.SummarizeBranch(context.Background(), "e0000001", compaction.Offline{}, "")
	if !ok || err != nil || res.Summary == "" {
		t.Errorf("to the first entry: %+v, ok %v, %v; want a summary", res, ok, err)
	}
}
