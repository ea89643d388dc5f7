package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// tail -n 2 of a session whose last entry is 50 MB read the whole file
// and held it several times over (500 MB in the report). It now reads
// the end backwards: what it allocates follows the lines it shows, not
// the file. Measured as the bytes allocated during the command (an upper
// bound of its heap growth), never as time. --json prints the lines as
// they are (about 1x the lines); the text line decodes the message to
// find its first line of text (up to about 3x the lines).
func TestTailMemoryIsTheLinesShown(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB of session files")
	}
	cases := []struct {
		before, last int // bytes of small entries, bytes of the last entry
	}{
		{10 << 20, 50 << 20}, // the report's case
		{40 << 20, 1 << 20},  // the file, not the last entry, is large
	}
	for _, c := range cases {
		var b strings.Builder
		b.WriteString(testenv.PiHeader + "\n")
		for i := 0; b.Len() < c.before; i++ {
			b.WriteString(testenv.PiMessage(fmt.Sprintf("m%07d", i), "") + "\n")
		}
		fmt.Fprintf(&b, `{"type":"message","id":"big","parentId":null,"timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":2}}`+"\n", strings.Repeat("y", c.last))
		p := filepath.Join(t.TempDir(), "big.jsonl")
		testenv.WriteFile(t, p, b.String())
		size := b.Len()
		b = strings.Builder{}
		for _, mode := range []struct {
			args  []string
			times uint64 // allowed allocation, in multiples of the last entry
		}{
			{[]string{"tail", "-n", "2", "--json", p}, 3},
			{[]string{"tail", "-n", "2", p}, 7},
		} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code := run(context.Background(), mode.args, strings.NewReader(""), io.Discard, io.Discard)
			runtime.ReadMemStats(&after)
			if code != exitOK {
				t.Fatalf("%v: exit %d", mode.args, code)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v: %.1f MB allocated; the file is %.1f MB, its last entry %.1f MB", mode.args[:len(mode.args)-1], float64(alloc)/(1<<20), float64(size)/(1<<20), float64(c.last)/(1<<20))
			if limit := uint64(c.last)*mode.times/2 + 4<<20; alloc > limit {
				t.Errorf("%v allocated %d bytes for a %d-byte file, more than %d (%.1f times its last entry, plus 4 MB)",
					mode.args[:len(mode.args)-1], alloc, size, limit, float64(mode.times)/2)
			}
		}
	}
}
