package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

var compactCommand = newCommand("compact", "compact a session: summarise its older part, as pi does")

func init() { compactCommand.run = runCompact }

// summaryFlags are the flags that choose a summariser (compact, branch).
type summaryFlags struct {
	text, file, cmd *string
	json            *bool
	timeout         *time.Duration
	maxBytes        *int64
	fs              *flag.FlagSet
}

// Defaults of --summary-timeout and --summary-max-bytes.
const (
	defaultSummaryTimeout  = 10 * time.Minute
	defaultSummaryMaxBytes = compaction.DefaultMaxOutput
)

func addSummaryFlags(fs *flag.FlagSet) *summaryFlags {
	return &summaryFlags{
		fs:   fs,
		text: fs.String("summary", "", "use `TEXT` as the summary"),
		file: fs.String("summary-file", "", "read the summary from file `F` ('-': standard input)"),
		cmd:  fs.String("summary-cmd", "", "run `CMD` (with sh -c) per summary request: prompt on stdin, summary on stdout"),
		json: fs.Bool("summary-json", false, "give --summary-cmd the whole request as JSON on stdin instead of the prompt"),
		timeout: durationFlag(fs, "summary-timeout", defaultSummaryTimeout,
			"kill --summary-cmd (its whole process group) when one run takes longer than `DURATION`; 0: no limit"),
		maxBytes: sizeFlag(fs, "summary-max-bytes", defaultSummaryMaxBytes,
			"kill --summary-cmd when it prints more than `SIZE` (bytes, or with a unit: 512K, 4M); 0: no limit"),
	}
}

func (sf *summaryFlags) set(name string) bool { return isSet(sf.fs, name) }

// check reports a usage mistake: more than one source.
func (sf *summaryFlags) check() string {
	n := 0
	for _, name := range []string{"summary", "summary-file", "summary-cmd"} {
		if sf.set(name) {
			n++
		}
	}
	if n > 1 {
		return "--summary, --summary-file and --summary-cmd cannot be combined"
	}
	for _, name := range []string{"summary-json", "summary-timeout", "summary-max-bytes"} {
		if sf.set(name) && !sf.set("summary-cmd") {
			return "--" + name + " needs --summary-cmd"
		}
	}
	return ""
}

// callerText returns the caller's own summary text, if they gave one.
func (sf *summaryFlags) callerText(stdin io.Reader) (string, bool, error) {
	switch {
	case sf.set("summary"):
		return *sf.text, true, nil
	case sf.set("summary-file"):
		var data []byte
		var err error
		what := "summary file " + *sf.file
		if *sf.file == "-" {
			what = "the summary on standard input"
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(*sf.file)
		}
		if err != nil {
			return "", false, fmt.Errorf("read summary: %w", err)
		}
		text, err := compaction.SummaryText(data)
		if err != nil {
			return "", false, fmt.Errorf("%s is %w", what, err)
		}
		return text, true, nil
	}
	return "", false, nil
}

// summarizer returns the summariser the flags choose and its name for
// output: the command, or the offline one.
func (sf *summaryFlags) summarizer() (compaction.Summarizer, string) {
	if sf.set("summary-cmd") {
		return compaction.Shell(*sf.cmd, *sf.json, *sf.timeout, *sf.maxBytes), "command"
	}
	return compaction.Offline{}, "offline"
}

func runCompact(e *env, args []string) int {
	fs := e.flags(compactCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	keep := countFlag(fs, "keep-tokens", "keep about `N` estimated tokens verbatim (default: pi's settings, else 20000)")
	reserve := countFlag(fs, "reserve-tokens", "reserve `N` tokens for replies; sizes the summary requests (default: pi's settings, else 16384)")
	sf := addSummaryFlags(fs)
	instructions := fs.String("instructions", "", "extra instructions `TEXT` for the summary (pi's /compact TEXT)")
	reasoning := fs.Bool("reasoning", false, "the summarising model can reason: requests ask it to reason at the session's thinking level, as pi does")
	dryRun := fs.Bool("dry-run", false, "show what would be done; write nothing, run no summariser")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(compactCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if code := e.oneSession(pos); code >= 0 {
		return code
	}
	if msg := sf.check(); msg != "" {
		return e.usageError("%s", msg)
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	var s *engine.Session
	if *dryRun {
		s, err = openReadOnly(e.ctx, path)
	} else {
		s, err = openForWrite(e.ctx, path, *wait, "sessctl compact")
	}
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()

	settings, warnings := compactionSettings(storeAgent(*store), s.Cwd())
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "sessctl: %s: warning: %v\n", e.name, w)
	}
	if keep.set {
		settings.KeepRecentTokens = keep.n
	}
	if reserve.set {
		settings.ReserveTokens = reserve.n
	}
	settings.Reasoning = *reasoning

	prep, err := s.PrepareCompaction(settings)
	switch {
	case errors.Is(err, compaction.ErrNoMessages):
		return e.refuse(err, "a session needs at least two messages before it can be compacted")
	case errors.Is(err, compaction.ErrAlreadyCompacted):
		return e.refuse(err, "the last entry is already a compaction; it can be compacted again once more entries follow")
	case errors.Is(err, compaction.ErrNothingToCompact):
		// pi 1.x prepares nothing when no message comes before the cut
		// (everything fits in what is kept), as sessctl refused before.
		return e.refuse(fmt.Errorf("%w: keeping about %d tokens, no message comes before the cut", err, settings.KeepRecentTokens),
			"lower --keep-tokens to summarise more, or compact once the session is longer")
	case err != nil:
		return e.fail(err)
	}
	kept, _ := s.Entry(prep.FirstKeptEntryID)
	keptKind := render.EntryKind(kept)

	var res compaction.Result
	source := "dry-run"
	if !*dryRun {
		text, own, err := sf.callerText(e.stdin)
		if err != nil {
			return e.fail(err)
		}
		if own {
			res, source = compaction.FinishSummary(prep, text), "caller"
		} else {
			var sum compaction.Summarizer
			sum, source = sf.summarizer()
			if res, err = compaction.Compact(e.ctx, prep, sum, *instructions); err != nil {
				return e.fail(fmt.Errorf("%w; nothing was written", err))
			}
		}
	} else {
		res = compaction.FinishSummary(prep, "")
	}

	entryID := ""
	if !*dryRun {
		if entryID, err = s.AppendCompactionResult(res); err != nil {
			return e.fail(err)
		}
	}
	if err := s.Close(); err != nil {
		return e.fail(err)
	}

	path, _ = filepath.Abs(path)
	out := render.CompactionReport{Path: path, EntryID: entryID, Summarizer: source, FirstKeptKind: keptKind, DryRun: *dryRun,
		Instructions: *instructions, Prep: prep, Result: res, Settings: settings}
	if *asJSON {
		jsonOut(e.stdout, out.JSON())
	} else {
		_ = out.Text(e.stdout)
	}
	return exitOK
}

// compactionSettings returns the compaction settings of pi's settings
// files for a session of agent in cwd (compaction.ReadSettings).
func compactionSettings(agent layout.Agent, cwd string) (compaction.Settings, []error) {
	dir, _ := layout.AgentDir(agent)
	return compaction.ReadSettings(vfs.OS(), layout.SettingsFiles(agent, dir, cwd)...)
}

// storeAgent is the agent whose directory holds new sessions for --store.
func storeAgent(store string) layout.Agent {
	if ps, err := layout.ResolvePlaces(store); err == nil && len(ps) == 1 && ps[0].Name == layout.PlaceIndusagi {
		return layout.AgentIndusagi
	}
	return layout.AgentPi
}

// refuse reports a compaction pi would refuse too, with a hint; exit 1.
func (e *env) refuse(err error, hint string) int {
	fmt.Fprintf(e.stderr, "sessctl: %s: %v\nhint: %s\n", e.name, err, hint)
	return exitFailure
}
