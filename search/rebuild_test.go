package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

// rebuilder is a child process: it searches a store for a word, rounds
// times, each time with a new Index (a rebuild first when asked), and
// fails unless every search succeeds with exactly want hits. Arguments:
// store root, index dir, "rebuild" or "search", rounds, word, want.
func rebuilder() int {
	a := os.Args[1:]
	root, dir, mode, word := a[0], a[1], a[2], a[4]
	rounds, _ := strconv.Atoi(a[3])
	want, _ := strconv.Atoi(a[5])
	for i := 1; i <= rounds; i++ {
		x, err := Open(context.Background(), Options{Dir: dir, Rebuild: mode == "rebuild"})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s round %d: open: %v\n", mode, i, err)
			return 1
		}
		hits, err := collect(x, Query{Text: word, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}})
		x.Close()
		if err != nil || len(hits) != want {
			fmt.Fprintf(os.Stderr, "%s round %d: %d hits (want %d), %v\n", mode, i, len(hits), want, err)
			return 1
		}
	}
	return 0
}

// TestSearchBesideRebuild runs processes that rebuild the index and
// search beside processes that only search, on one index: every search
// must succeed with every hit (it used to fail with "disk I/O error"
// when a rebuild deleted the databases another process had open). Each
// process does a few rounds; SESSCTL_SEARCH_ROUNDS=N (make crash) more.
func TestSearchBesideRebuild(t *testing.T) {
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("SESSCTL_SEARCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	root := filepath.Join(t.TempDir(), "sessions")
	const sessions = 150
	for i := range sessions {
		lines := append([]string{header(fmt.Sprintf("fill-%d", i), "/w", "2026-03-01T00:00:00.000Z")}, fixture1[1:]...)
		writeLines(t, filepath.Join(root, fmt.Sprintf("fill-%03d.jsonl", i)), lines)
	}
	dir := filepath.Join(t.TempDir(), "index")
	type proc struct {
		mode string
		out  strings.Builder
		err  error
		done chan struct{}
	}
	var procs []*proc
	for _, mode := range []string{"rebuild", "search", "rebuild", "search"} {
		p := &proc{mode: mode, done: make(chan struct{})}
		cmd := testenv.Command("rebuilder", root, dir, mode, strconv.Itoa(rounds), "narwhal", strconv.Itoa(sessions))
		cmd.Stdout, cmd.Stderr = &p.out, &p.out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			p.err = cmd.Wait()
			close(p.done)
		}()
		procs = append(procs, p)
	}
	for _, p := range procs {
		<-p.done
		if p.err != nil {
			t.Errorf("%s process: %v\n%s", p.mode, p.err, p.out.String())
		}
	}
	x := openIndex(t, Options{Dir: dir})
	if n, err := x.Check(context.Background()); n != 0 || err != nil {
		t.Errorf("check after the rounds: %d damaged, %v", n, err)
	}
}
