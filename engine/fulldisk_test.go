package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

// A label on a real full disk (a 600 KB tmpfs, as in the report): the
// write stores what fits and fails with ENOSPC. The file is left byte
// for byte as it was, and pi's next append (pi 0.58.3 itself, once space
// is freed) is a whole entry, not glued onto a fragment of the label.
func TestLabelOnAFullTmpfs(t *testing.T) {
	t.Parallel()
	dir := testenv.Tmpfs(t, 600<<10)
	s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	target, err := s.AppendMessage(raw(`{"role":"user","content":"run the tests","timestamp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":[{"type":"text","text":"running"}],"timestamp":2}`)); err != nil {
		t.Fatal(err)
	}
	file := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Fill the disk, then free 64 KB: room for the lock's owner record
	// and part of the label, not all of it.
	filler := filepath.Join(dir, "filler")
	f, err := os.OpenFile(filler, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	size := int64(0)
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size - 64<<10); err != nil {
		t.Fatal(err)
	}
	f.Close()

	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	w, err := engine.OpenFile(context.Background(), file, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("label ", 200<<10/6)
	_, err = w.AppendLabelChange(target, text)
	w.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("label on a full disk: %v, want ENOSPC", err)
	}
	t.Logf("label: %v", err)
	after, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, before) {
		t.Errorf("the failed label changed the file: %d bytes, were %d; it ends %q", len(after), len(before), after[max(0, len(after)-80):])
	}

	// pi appends once there is room again.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	node, modules := testenv.Pi(t)
	out, err := exec.Command(node, filepath.Join("..", "scripts", "pi-writer.mjs"), modules, file, "10", "1", "100").Output()
	if err != nil {
		t.Fatalf("pi: %v", err)
	}
	piID := strings.TrimSpace(string(out))
	if piID == "" {
		t.Fatal("pi wrote no entry")
	}
	r, err := engine.OpenFile(context.Background(), file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.Entry(piID); !ok {
		t.Errorf("pi's entry %s is not in the file: glued onto what the failed label left?", piID)
	}
	if m := r.Recovery().Malformed; m != 0 {
		t.Errorf("%d malformed lines after pi's append", m)
	}
}
