package engine_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

// Under SyncNone the file's identity is checked now and then rather than on
// every append; appends that went to a removed file are still reported, at
// the latest by Close, never silently dropped.
func TestSyncNoneWriterReportsARemovedFileOnClose(t *testing.T) {
	t.Parallel()
	testenv.SkipUnderWine(t, "POSIX delete semantics (FILE_DISPOSITION_POSIX_SEMANTICS): a file deleted while open stays in its directory until closed")
	dir := t.TempDir()
	s, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"one"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"two"}`)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.SessionFile()); err != nil {
		t.Fatal(err)
	}
	// Within the check interval this append may still be taken; either way
	// the loss must surface.
	_, appendErr := s.AppendMessage(raw(`{"role":"user","content":"three"}`))
	closeErr := s.Close()
	if !errors.Is(appendErr, engine.ErrVanished) && !errors.Is(closeErr, engine.ErrVanished) {
		t.Fatalf("append error %v, close error %v: want ErrVanished from one of them", appendErr, closeErr)
	}
	if _, err := os.Stat(s.SessionFile()); err == nil {
		t.Fatal("the removed session file was re-created")
	}
}
