package adk

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// openService opens the Service the tests use on dir.
func openService(ctx context.Context, dir string) (*Service, error) {
	return New(ctx, Options{
		Store:    engine.StoreOptions{Dir: filepath.Join(dir, "sessions"), CacheDir: filepath.Join(dir, "cache")},
		StateDir: filepath.Join(dir, "state"),
		Cwd:      dir,
	})
}

// appenderChild appends events to session s1 of app "app", user "u":
// appender DIR PREFIX N MODE, MODE "hold" (the writer held until Close)
// or "release" (Release after each event, as at the end of a turn). It
// reads the session once, at the start, and appends to that session
// object however stale it gets. It prints each event's id once
// AppendEvent returned; with N 0 it appends until killed.
func appenderChild() int {
	dir, prefix, mode := os.Args[1], os.Args[2], os.Args[4]
	n, _ := strconv.Atoi(os.Args[3])
	ctx := context.Background()
	s, err := openService(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	got, err := s.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; n == 0 || i < n; i++ {
		ev := session.NewEvent(ctx, "inv-"+prefix)
		ev.ID = fmt.Sprintf("%s-%d", prefix, i)
		ev.Author = "agent"
		ev.Content = genai.NewContentFromText(strings.Repeat("text of "+ev.ID+" ", 20), "model")
		ev.Actions.StateDelta["last-"+prefix] = float64(i)
		ev.LLMResponse.TurnComplete = true
		if err := s.AppendEvent(ctx, got.Session, ev); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(ev.ID)
		if mode == "release" {
			if err := s.Release("app", "u", "s1"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	return 0
}

// createS1 creates the session the children append to, and releases it.
func createS1(t *testing.T, dir string) {
	t.Helper()
	s, err := openService(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(t.Context(), &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// eventsOfS1 returns the ids of session s1's events, in order, and its
// state.
func eventsOfS1(t *testing.T, dir string) ([]string, map[string]any) {
	t.Helper()
	s, err := openService(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for ev := range got.Session.Events().All() {
		ids = append(ids, ev.ID)
	}
	st := map[string]any{}
	for k, v := range got.Session.State().All() {
		st[k] = v
	}
	return ids, st
}

// TestTwoProcessesAppend: two processes append to one session, each
// through a session object it read once (stale as soon as the other
// appends, ADK database service's "stale session" case): neither fails a
// turn and every event is kept, each process's in its order. With the
// writer held across calls the second waits for the first to close;
// releasing it after each turn lets them interleave.
func TestTwoProcessesAppend(t *testing.T) {
	const n = 25
	for _, mode := range []string{"hold", "release"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			createS1(t, dir)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			outs := make([][]byte, 2)
			for p := range 2 {
				wg.Go(func() {
					cmd := testenv.Command("appender", dir, fmt.Sprintf("p%d", p), strconv.Itoa(n), mode)
					outs[p], errs[p] = cmd.CombinedOutput()
				})
			}
			wg.Wait()
			for p := range 2 {
				if errs[p] != nil {
					t.Fatalf("process %d: %v\n%s", p, errs[p], outs[p])
				}
			}
			ids, st := eventsOfS1(t, dir)
			if len(ids) != 2*n {
				t.Fatalf("%d events kept, want %d: %v", len(ids), 2*n, ids)
			}
			next := map[string]int{}
			for _, id := range ids {
				prefix, num, _ := strings.Cut(id, "-")
				i, _ := strconv.Atoi(num)
				if i != next[prefix] {
					t.Fatalf("event %s out of order (want %s-%d): %v", id, prefix, next[prefix], ids)
				}
				next[prefix]++
			}
			if next["p0"] != n || next["p1"] != n {
				t.Fatalf("events per process %v, want %d each", next, n)
			}
			if st["last-p0"] != float64(n-1) || st["last-p1"] != float64(n-1) {
				t.Errorf("state %v, want last-p0 and last-p1 %d", st, n-1)
			}
		})
	}
}

// TestKillDuringAppend: a process killed (SIGKILL) while it appends loses
// no event AppendEvent had acknowledged, and the session still reads.
func TestKillDuringAppend(t *testing.T) {
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("SESSCTL_ADK_KILLS")); err == nil {
		rounds = v
	}
	dir := t.TempDir()
	createS1(t, dir)
	var acked []string
	for r := range rounds {
		cmd := testenv.Command("appender", dir, fmt.Sprintf("k%d", r), "0", "hold")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := 5 + rand.IntN(40)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			acked = append(acked, sc.Text())
			if stop--; stop == 0 {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		for sc.Scan() { // what it printed before it died was acknowledged too
			acked = append(acked, sc.Text())
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the appender was not killed: %s", r, stderr.String())
		}
		ids, _ := eventsOfS1(t, dir)
		kept := map[string]bool{}
		for _, id := range ids {
			kept[id] = true
		}
		for _, id := range acked {
			if !kept[id] {
				t.Fatalf("round %d: acknowledged event %s lost (%d kept, %d acknowledged)", r, id, len(ids), len(acked))
			}
		}
		t.Logf("round %d: %d acknowledged, %d kept", r, len(acked), len(ids))
	}
}
