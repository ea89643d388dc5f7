package agentuse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// go test -run '^$' -bench AgentUse -benchtime 2s ./engine/

func benchAUWriter(b *testing.B, sync agentuse.SyncPolicy) (*agentuse.Session, string) {
	b.Helper()
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: b.TempDir(), Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	w, err := st.Create(context.Background(), auSpec)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	msg, err := w.AddMessage(agentuse.MessageSpec{Task: "bench", ModelID: "anthropic:claude-sonnet-4-5"})
	if err != nil {
		b.Fatal(err)
	}
	return w, msg
}

var benchInput = json.RawMessage(`{"command":"go test ./... 2>&1 | tail -n 40","timeout":120000}`)

// BenchmarkAgentUseAddPart measures writing one new part file (a running
// tool call, ~400 bytes): temporary file, rename, and with SyncEach fsync
// of the file and its directory.
func BenchmarkAgentUseAddPart(b *testing.B) {
	for _, c := range []struct {
		name string
		sync agentuse.SyncPolicy
	}{{"fsync", agentuse.SyncEach}, {"nofsync", agentuse.SyncNone}} {
		b.Run(c.name, func(b *testing.B) {
			w, msg := benchAUWriter(b, c.sync)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.AddPart(msg, agentuse.ToolPart("toolu_01A", "tools__bash", benchInput, time.Now())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentUseUpdatePart measures a read-modify-write of one part
// under the session lock (streamed text growing by a line each time).
func BenchmarkAgentUseUpdatePart(b *testing.B) {
	for _, c := range []struct {
		name string
		sync agentuse.SyncPolicy
	}{{"fsync", agentuse.SyncEach}, {"nofsync", agentuse.SyncNone}} {
		b.Run(c.name, func(b *testing.B) {
			w, msg := benchAUWriter(b, c.sync)
			part, err := w.AddPart(msg, agentuse.TextPart("", time.Now()))
			if err != nil {
				b.Fatal(err)
			}
			text := ""
			b.ReportAllocs()
			for b.Loop() {
				if len(text) > 4000 {
					text = ""
				}
				text += "The build fails because codec.go misses an import.\n"
				if err := w.UpdatePart(msg, part, agentuse.Field{Key: "text", Value: text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentUseReadSession10k reads a session of 10,000 parts (text,
// tool and log parts of one message) and orders them.
func BenchmarkAgentUseReadSession10k(b *testing.B) {
	const n = 10000
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: b.TempDir(), Sync: agentuse.SyncNone})
	if err != nil {
		b.Fatal(err)
	}
	w, err := st.Create(context.Background(), auSpec)
	if err != nil {
		b.Fatal(err)
	}
	msg, err := w.AddMessage(agentuse.MessageSpec{Task: "bench", ModelID: "anthropic:claude-sonnet-4-5"})
	if err != nil {
		b.Fatal(err)
	}
	start := time.UnixMilli(1795293774000)
	for i := range n {
		t := start.Add(time.Duration(i) * time.Millisecond)
		var p agentuse.Part
		switch i % 3 {
		case 0:
			p = agentuse.TextPart(fmt.Sprintf("Step %d: reading the failing test output and deciding what to change next.", i), t)
		case 1:
			p = agentuse.ToolPart(fmt.Sprintf("toolu_%06d", i), "tools__bash", benchInput, t)
		default:
			p = agentuse.LogPart("info", fmt.Sprintf("tool call %d finished", i), "", t)
		}
		if _, err := w.AddPart(msg, p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	x, err := st.Resolve(ctx, w.ID())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c, err := st.Read(ctx, x)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Messages) != 1 || len(c.Messages[0].Parts) != n {
			b.Fatalf("read %d messages", len(c.Messages))
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "parts/s")
}

// BenchmarkAgentUseList measures listing 2,000 sessions (each with one
// message and a subagent) of 20 projects through Walk: List with
// subagents, as the viewer does.
func BenchmarkAgentUseList(b *testing.B) {
	root := b.TempDir()
	for p := range 20 {
		st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: fmt.Sprintf("%s/p%02d/session", root, p), Sync: agentuse.SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		for range 50 {
			w, err := st.Create(context.Background(), auSpec)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.AddMessage(agentuse.MessageSpec{Task: "bench", ModelID: "anthropic:claude-sonnet-4-5"}); err != nil {
				b.Fatal(err)
			}
			sub, err := w.CreateSubagent(context.Background(), auSpec)
			if err != nil {
				b.Fatal(err)
			}
			sub.Close()
			w.Close()
		}
	}
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: root})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := st.List(context.Background(), agentuse.ListOptions{Subagents: true})
		if err != nil || len(list) != 2000 {
			b.Fatal(len(list), err)
		}
	}
}
