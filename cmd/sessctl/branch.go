package main

import (
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var branchCommand = &command{
	name:    "branch",
	summary: "move a session's active leaf to another entry, durably",
	usage:   helpText("branch"),
}

func init() { register(branchCommand).run = runBranch }

func runBranch(e *env, args []string) int {
	fs := e.flags(branchCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	summarize := fs.Bool("summarize", false, "summarise the abandoned branch (offline, or with --summary-cmd)")
	sf := addSummaryFlags(fs)
	instructions := fs.String("instructions", "", "extra instructions `TEXT` for --summarize")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(branchCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if len(pos) != 2 {
		return e.usageError("expected SESSION and ENTRY")
	}
	if msg := sf.check(); msg != "" {
		return e.usageError("%s", msg)
	}
	if sf.set("summary-file") {
		return e.usageError("--summary-file is for compact; use --summary TEXT")
	}
	if *summarize && sf.set("summary") {
		return e.usageError("--summary and --summarize cannot be combined")
	}
	if sf.set("summary-cmd") && !*summarize {
		return e.usageError("--summary-cmd needs --summarize")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	s, err := openForWrite(e.ctx, path, *wait, engine.Options{Command: "sessctl branch"})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	target, err := s.ResolveEntry(pos[1])
	if err != nil {
		return e.failEntry(err, pos[0])
	}
	oldLeaf, oldKind := s.LeafIDKind()
	if oldKind == jsonl.KindString && oldLeaf == target {
		fmt.Fprintf(e.stderr, "sessctl: branch: the leaf already is %s; nothing to do\n", target)
		if *asJSON {
			jsonOut(e.stdout, jsonl.NewObject(128).String("session", s.SessionFile()).String("from", oldLeaf).
				String("to", target).Null("entryId").Null("summary").Bytes())
		}
		return exitOK
	}

	summary := ""
	var details any
	var fromHook *bool
	switch {
	case sf.set("summary"):
		summary = *sf.text
	case *summarize:
		sum, _ := sf.summarizer()
		res, ok, err := s.SummarizeBranch(e.ctx, target, sum, *instructions)
		if err != nil {
			return e.fail(fmt.Errorf("%w; nothing was written", err))
		}
		if ok {
			f := false
			summary, details, fromHook = res.Summary, res.Details.JSON(), &f
		}
	}
	id, err := s.BranchWithSummary(&target, summary, details, fromHook)
	if err != nil {
		return e.fail(err)
	}
	file := s.SessionFile()
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		b := jsonl.NewObject(256+len(summary)).String("session", file)
		if oldKind == jsonl.KindString {
			b.String("from", oldLeaf)
		} else {
			b.Null("from")
		}
		jsonOut(e.stdout, b.String("to", target).String("entryId", id).String("summary", summary).Bytes())
		return exitOK
	}
	fmt.Fprintf(e.stdout, "leaf moved to %s; new leaf %s (branch summary", target, id)
	if summary == "" {
		fmt.Fprint(e.stdout, ", empty)\n")
	} else {
		fmt.Fprintf(e.stdout, ", %d characters)\n", len([]rune(summary)))
	}
	return exitOK
}
