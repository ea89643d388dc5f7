package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
)

// appender is the child the kill test starts (see main_test.go): it opens
// the session file named by its argument for writing and appends messages
// "n=<i>" forever, printing "ack <i>" after each append returns. The
// parent kills it with SIGKILL at a random moment.
func appender() int {
	path := os.Args[1]
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: filepath.Dir(path), Sync: engine.SyncEach, Command: "kill-child"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child store:", err)
		return 1
	}
	s, err := st.Open(context.Background(), path, engine.OpenOptions{Create: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 1
	}
	if err := s.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "child flush:", err)
		return 1
	}
	next := len(s.Entries())
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	// Big and small lines, so kills land inside writes of many sizes.
	pad := strings.Repeat("x", 30000)
	for i := next; ; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		body := fmt.Sprintf(`{"role":%q,"content":"n=%d %s","timestamp":%d}`, role, i, pad[:(i*7919)%len(pad)], 1772355600000+i)
		if _, err := s.AppendMessage(raw(body)); err != nil {
			fmt.Fprintln(os.Stderr, "child append:", err)
			return 1
		}
		fmt.Fprintf(out, "ack %d\n", i)
		out.Flush()
	}
}

// TestKillWhileAppending kills a real appender process at random moments
// (SESSCTL_KILLS times, 25 by default; `make crash` runs 200) and checks,
// each time, that every acknowledged entry is in the file, that the lock
// is free at once, and that the reopened tree is valid.
func TestKillWhileAppending(t *testing.T) {
	t.Parallel()
	kills := 25
	if n, err := strconv.Atoi(os.Getenv("SESSCTL_KILLS")); err == nil && n > 0 {
		kills = n
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	acked := map[int]bool{}
	lost, torn := 0, 0
	for k := 0; k < kills; k++ {
		cmd := testenv.Command("appender", path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ackedBefore := len(acked) // the last kill's reader is done with acked
		done := make(chan struct{})
		ready := make(chan struct{})
		firstAck := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			acks := 0
			for sc.Scan() {
				if sc.Text() == "ready" {
					close(ready)
					continue
				}
				if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "ack ")); err == nil {
					acked[n] = true
					if acks++; acks == 1 {
						close(firstAck)
					}
				}
			}
			close(done)
		}()
		select {
		case <-ready:
		case <-done:
			_ = cmd.Wait()
			t.Fatalf("kill %d: the appender exited before it was ready: %s", k, stderr.String())
		}
		if k == kills-1 && ackedBefore == 0 {
			// On a loaded machine the appender may have been killed
			// before its first append every time: let the last one
			// append something, so the check below is not empty.
			select {
			case <-firstAck:
			case <-done:
			}
		}
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), "child ") {
			t.Fatalf("kill %d: the appender failed by itself: %s", k, stderr.String())
		}

		// The kernel released the lock with the process: a write-mode open
		// succeeds at once, and a torn tail the kill left is cut (the
		// killed appender holds no descriptor any more).
		s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), path, engine.OpenOptions{})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", k, err)
		}
		if err := s.Flush(); err != nil { // the repairs the first write would make
			t.Fatalf("kill %d: flush: %v", k, err)
		}
		if s.Recovery().TornBytes > 0 {
			torn++
		}
		present := map[int]bool{}
		ids := map[string]bool{}
		for _, e := range s.Entries() {
			if ids[e.ID] {
				t.Fatalf("kill %d: duplicate id %s", k, e.ID)
			}
			ids[e.ID] = true
			if p, ok := e.Field("parentId"); ok && string(p) != "null" {
				pid, _ := jsonl.String(p)
				if !ids[pid] {
					t.Fatalf("kill %d: entry %s has a missing parent %s", k, e.ID, pid)
				}
			}
			c, _ := jsonl.Lookup(e.Message(), "content")
			text, _ := jsonl.String(c)
			var n int
			if _, err := fmt.Sscanf(text, "n=%d", &n); err == nil {
				present[n] = true
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for n := range acked {
			if !present[n] {
				lost++
				t.Errorf("kill %d: acknowledged entry n=%d is missing", k, n)
			}
		}
	}
	t.Logf("%d kills, %d acknowledged entries, %d lost, %d torn tails repaired", kills, len(acked), lost, torn)
	if len(acked) == 0 {
		t.Errorf("no acknowledgement over %d kills: the appender never ran", kills)
	}
}
