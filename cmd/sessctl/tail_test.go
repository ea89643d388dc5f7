package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// syncBuffer is a buffer written by one goroutine and read by another;
// changed is signalled after every write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLines waits until b holds at least n lines.
func (b *syncBuffer) waitLines(t *testing.T, n int) {
	t.Helper()
	for strings.Count(b.String(), "\n") < n {
		select {
		case <-b.changed:
		case <-time.After(time.Minute):
			t.Fatalf("waited a minute for %d lines; have:\n%s", n, b.String())
		}
	}
}

// TestTailGolden checks tail's output on the fixture session, and that
// tail -f prints what another writer appends, line by line.
func TestTailGolden(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	main := buildFixtures(t, dir)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"tail.txt", []string{"tail", "-n", "100", main}},
		{"tail-3.jsonl", []string{"tail", "--json", "-n", "3", main}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("sessctl %v: exit %d, stderr:\n%s", tc.args, code, errOut)
			}
			checkGolden(t, tc.golden, out)
		})
	}

	for _, tc := range []struct {
		golden string
		json   bool
	}{{"tail-f.txt", false}, {"tail-f.jsonl", true}} {
		t.Run(tc.golden, func(t *testing.T) {
			session := filepath.Join(t.TempDir(), "s.jsonl")
			w, err := openStore(t, fixtureOptions("", "f0000000-0000-4000-8000-00000000000f", "f", time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))).Open(t.Context(), session, engine.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			if _, err := w.AppendModelChange("anthropic", "claude-sonnet-4-5"); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			out := &syncBuffer{changed: make(chan struct{}, 1)}
			var errOut bytes.Buffer
			args := []string{"tail", "-f", session}
			if tc.json {
				args = []string{"tail", "-f", "--json", session}
			}
			done := make(chan int)
			go func() { done <- run(ctx, args, strings.NewReader(""), out, &errOut) }()
			out.waitLines(t, 1)
			steps := []message.Message{
				message.NewUser("Why does the parser\nreject trailing commas?", at),
				message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
					[]message.Block{message.NewText("Let me look."), message.NewToolCall("call_1", "read", map[string]string{"path": "parser.go"})},
					message.NewUsage(100, 20, 0, 0, message.Cost{Total: 0.0006}), message.StopToolUse, at),
				message.NewToolResult("call_1", "read", []message.Block{message.NewText("package parser\n...")}, false, at),
			}
			for i, m := range steps {
				if _, err := w.AppendMessage(m); err != nil {
					t.Fatal(err)
				}
				out.waitLines(t, 2+i)
			}
			if _, err := w.AppendSessionInfo("trailing commas"); err != nil {
				t.Fatal(err)
			}
			out.waitLines(t, 2+len(steps))
			cancel()
			if code := <-done; code != exitOK || errOut.Len() > 0 {
				t.Fatalf("tail -f: exit %d, stderr:\n%s", code, errOut.String())
			}
			checkGolden(t, tc.golden, out.String())
		})
	}
}
