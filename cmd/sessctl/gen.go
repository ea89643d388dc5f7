package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/workload"
)

var genCommand = &command{
	name:    "gen",
	summary: "generate benchmark workloads (hidden)",
	hidden:  true,
	usage:   helpText("gen"),
}

func init() { register(genCommand).run = runGen }

func runGen(e *env, args []string) int {
	fs := e.flags(genCommand)
	seed := fs.Uint64("seed", 1, "random seed")
	entries := fs.Int("entries", 100000, "entries in the session")
	v1 := fs.Bool("v1", false, "write a version 1 file (no ids)")
	sessions := fs.Int("sessions", 5000, "number of sessions (dir)")
	syncEach := fs.Bool("sync", false, "fsync every append (append)")
	size := fs.Int("size", 50000, "approximate bytes per session (dir)")
	if code := e.parse(genCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return e.usageError("expected 'session', 'dir' or 'append'")
	}
	if fs.NArg() != 2 {
		return e.usageError("expected one output path")
	}
	kind, out := fs.Arg(0), fs.Arg(1)
	if kind != "append" {
		if err := sessionfile.CheckOutput(nil, out); err != nil {
			return e.fail(err)
		}
	}
	switch kind {
	case "session":
		o := workload.Options{Seed: *seed, Entries: *entries}
		if *v1 {
			o.Version = 1
		}
		n, err := workload.WriteFile(out, o)
		if err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "%s: %s, %s\n", human.QuotePath(out), human.Plural(*entries, "entry", "entries"), human.Plural(int(n), "byte", "bytes"))
	case "dir":
		n, err := workload.Dir(filepath.Clean(out), *sessions, *size, *seed)
		if err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "%s: %s, %s\n", human.QuotePath(out), human.Plural(*sessions, "session", "sessions"), human.Plural(int(n), "byte", "bytes"))
	case "append":
		policy := engine.SyncNone
		if *syncEach {
			policy = engine.SyncEach
		}
		n, d, err := benchAppend(e, out, *entries, policy)
		if err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "%s in %v: %.0f entries/s\n", human.Plural(n, "entry", "entries"), d.Round(time.Millisecond), float64(n)/d.Seconds())
	default:
		return e.usageError("unknown workload %s", human.Quote(kind))
	}
	return exitOK
}

// AppendUser and AppendAssistant are the messages `gen append` writes (and
// scripts/pi-bench.mjs too, so both measure the same bytes).
const (
	AppendUser      = `{"role":"user","content":"Run the tests again and tell me which package fails, and why; then propose the smallest fix that keeps the public API as it is.","timestamp":1772355600000}`
	AppendAssistant = `{"role":"assistant","content":[{"type":"thinking","thinking":"The failing package is layout: codec.go uses utf16 without importing it. The smallest fix adds the import."},{"type":"text","text":"layout fails to build: codec.go calls utf16.Encode but does not import unicode/utf16. Adding the import fixes it; nothing else changes."},{"type":"toolCall","id":"toolu_01","name":"edit","arguments":{"path":"layout/codec.go","oldText":"import (","newText":"import (\n\t\"unicode/utf16\""}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":12040,"output":180,"cacheRead":8000,"cacheWrite":0,"totalTokens":20220,"cost":{"input":0.03612,"output":0.0027,"cacheRead":0.0024,"cacheWrite":0,"total":0.04122}},"stopReason":"toolUse","timestamp":1772355601000}`
)

func benchAppend(e *env, dir string, n int, policy engine.SyncPolicy) (int, time.Duration, error) {
	st, err := engine.OpenStore(e.ctx, engine.StoreOptions{Dir: dir, Sync: policy})
	if err != nil {
		return 0, 0, err
	}
	s, err := st.Create(e.ctx, "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	var msgs [2]message.Message
	for i, raw := range []string{AppendAssistant, AppendUser} {
		if msgs[i], err = message.Decode([]byte(raw)); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	for i := range n {
		if _, err := s.AppendMessage(msgs[i%2]); err != nil {
			return i, time.Since(start), err
		}
	}
	return n, time.Since(start), nil
}
