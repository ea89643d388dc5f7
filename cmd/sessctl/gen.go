package main

import (
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/workload"
)

var genCommand = &command{
	name:    "gen",
	summary: "generate benchmark workloads (hidden)",
	hidden:  true,
	usage: `
Usage: sessctl gen session [--seed N] [--entries N] [--v1] FILE
       sessctl gen dir [--seed N] [--sessions N] [--size BYTES] DIR

Writes seeded, realistic pi session files for benchmarks: prompts,
assistant turns with thinking, text, tool calls and usage, tool results of
1-20 KB, a 100 KB image every thousand entries, branches, labels, names and
compactions. The same seed gives the same bytes.

Examples:
  sessctl gen session --entries 100000 big.jsonl
  sessctl gen session --entries 100000 --v1 old.jsonl
  sessctl gen dir --sessions 5000 --size 50000 ./sessions
`,
}

func init() { register(genCommand).run = runGen }

func runGen(e *env, args []string) int {
	if len(args) == 0 {
		return e.usageError("expected 'session' or 'dir'")
	}
	kind, args := args[0], args[1:]
	fs := e.flags(genCommand)
	seed := fs.Uint64("seed", 1, "random seed")
	entries := fs.Int("entries", 100000, "entries in the session")
	v1 := fs.Bool("v1", false, "write a version 1 file (no ids)")
	sessions := fs.Int("sessions", 5000, "number of sessions (dir)")
	size := fs.Int("size", 50000, "approximate bytes per session (dir)")
	if code := e.parse(genCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one output path")
	}
	out := fs.Arg(0)
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
		fmt.Fprintf(e.stdout, "%s: %d entries, %d bytes\n", out, *entries, n)
	case "dir":
		n, err := workload.Dir(filepath.Clean(out), *sessions, *size, *seed)
		if err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "%s: %d sessions, %d bytes\n", out, *sessions, n)
	default:
		return e.usageError("unknown workload %q", kind)
	}
	return exitOK
}
