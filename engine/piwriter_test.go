package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/lock"
)

// pi takes no lock and appends beside sessctl. A real pi process (its own
// SessionManager, in Node) appends tool results of a few megabytes in a
// loop for a couple of seconds, while this test opens the session and
// appends a label in a loop, as `sessctl label` does. Every entry pi
// wrote and every label must be in the file afterwards, with every parent
// present. (sessctl used to cut the line pi was writing when it opened the
// file, and every line pi finished before the cut: 52 of 150 entries were
// lost in one run. That takes a reader to see a write half done, which
// is rare, so this test catches it in some runs, not in all; the
// deterministic tests of the same code are in concurrent_test.go.)
func TestLabelsBesideARunningPi(t *testing.T) {
	t.Parallel()
	node, modules := testenv.Pi(t)
	dir := t.TempDir()
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

	// 3 s or 40 entries of 4 MB, whichever comes first: large writes are
	// the ones a reader can see half done.
	cmd := exec.Command(node, filepath.Join("..", "scripts", "pi-writer.mjs"), modules, file, "3", "40", strconv.Itoa(4<<20))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var piIDs []string
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			piIDs = append(piIDs, sc.Text())
			mu.Unlock()
		}
	}()

	// The test holds the session's lock itself, as a long-running writer
	// would, so that an open reads the file as soon as pi is seen in the
	// middle of a line (taking the lock first would make it late).
	lk, err := lock.Acquire(context.Background(), sessionfile.LockPath(file), lock.Options{Command: "sessctl label"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	var labels []string
	busy := 0
	text := "checked"
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		waitMidLine(t, file)
		w, err := openStore(t, engine.WithoutLock(engine.StoreOptions{})).Open(context.Background(), file, engine.OpenOptions{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		id, err := w.AppendLabelChange(target, text)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		switch {
		case errors.Is(err, engine.ErrBusy):
			busy++ // allowed: nothing was written
		case err != nil:
			t.Fatalf("label: %v", err)
		default:
			labels = append(labels, id)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pi: %v\n%s", err, stderr.String())
	}
	t.Logf("pi wrote %d entries, sessctl %d labels (%d refused as busy)", len(piIDs), len(labels), busy)
	if len(piIDs) == 0 || len(labels) == 0 {
		t.Fatalf("too little happened to judge: %d pi entries, %d labels", len(piIDs), len(labels))
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := jsonl.ParseFile(data)
	if len(p.Malformed) > 0 || p.Tail != jsonl.TailClean {
		t.Errorf("the file has %d malformed lines and tail %d", len(p.Malformed), p.Tail)
	}
	have := map[string]bool{}
	for _, e := range p.Entries[1:] {
		have[e.ID] = true
	}
	lost := 0
	for _, id := range piIDs {
		if !have[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of pi's %d entries are not in the file", lost, len(piIDs))
	}
	for _, id := range labels {
		if !have[id] {
			t.Errorf("label %s is not in the file", id)
		}
	}
	for _, e := range p.Entries[1:] {
		if e.ParentKind == jsonl.KindString && !have[e.ParentID] {
			t.Errorf("line %d: entry %s has a missing parent %s", e.Line, e.ID, e.ParentID)
		}
	}
}

// waitMidLine waits, up to 100ms, for a moment when the file does not end
// with a newline: pi is in the middle of writing a line. Opening the
// session then is what used to cut pi's line.
func waitMidLine(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := f.ReadAt(b, st.Size()-1); n == 1 && b[0] != '\n' {
			return
		}
	}
}
