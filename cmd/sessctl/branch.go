package main

import (
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var branchCommand = newCommand("branch", "move a session's active leaf to another entry, durably")

func init() { branchCommand.run = runBranch }

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
	if isSet(fs, "summary-file") {
		return e.usageError("--summary-file is for compact; use --summary TEXT")
	}
	if *summarize && isSet(fs, "summary") {
		return e.usageError("--summary and --summarize cannot be combined")
	}
	if isSet(fs, "summary") && *sf.text == "" {
		return e.usageError("--summary is empty: leave it out to move the leaf without a summary")
	}
	if isSet(fs, "summary-cmd") && !*summarize {
		return e.usageError("--summary-cmd needs --summarize")
	}
	s, target, code := e.openEntry(*store, pos[0], pos[1], *wait)
	if code >= 0 {
		return code
	}
	defer s.Close()
	oldLeaf, hasLeaf := s.LeafID()
	if hasLeaf && oldLeaf == target {
		fmt.Fprintf(e.stderr, "sessctl: branch: the leaf already is %s; nothing to do\n", human.QuotePath(target))
		if *asJSON {
			jsonOut(e.stdout, jsonl.NewObject(128).String("session", s.SessionFile()).String("from", oldLeaf).
				String("to", target).Null("entryId").Null("summary").Bytes())
		}
		return exitOK
	}

	summary, hasSummary := "", false
	var details any
	var fromHook *bool
	switch {
	case isSet(fs, "summary"):
		summary, hasSummary = *sf.text, true
	case *summarize:
		sum, _ := sf.summarizer()
		res, ok, err := s.SummarizeBranch(e.ctx, target, sum, *instructions)
		if err != nil {
			return e.fail(fmt.Errorf("%w; nothing was written", err))
		}
		if ok {
			f := false
			summary, details, fromHook, hasSummary = res.Summary, res.Details.JSON(), &f, true
		}
	}
	var id string
	var err error
	if hasSummary {
		id, err = s.BranchWithSummary(engine.BranchSummary{FromID: target, Summary: summary, Details: details, FromHook: fromHook})
	} else {
		id, err = s.BranchDurably(target)
	}
	if err != nil {
		return e.fail(err)
	}
	file := s.SessionFile()
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		jsonOut(e.stdout, jsonl.NewObject(256+len(summary)).String("session", file).StringOrNull("from", opt(oldLeaf, hasLeaf)).
			String("to", target).String("entryId", id).StringOrNull("summary", opt(summary, hasSummary)).Bytes())
		return exitOK
	}
	if hasSummary {
		fmt.Fprintf(e.stdout, "leaf moved to %s; new leaf %s (branch summary, %s)\n", human.QuotePath(target), id, human.Plural(len([]rune(summary)), "character", "characters"))
	} else {
		fmt.Fprintf(e.stdout, "leaf moved to %s; new leaf %s (no summary)\n", human.QuotePath(target), id)
	}
	return exitOK
}
