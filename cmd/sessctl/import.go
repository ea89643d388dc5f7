package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/sources"
)

var importCommand = newCommand("import", "import sessions of Claude Code, Codex, Gemini CLI, Cursor, Windsurf, opencode, agsh, Goose and Crush")

func init() { importCommand.run = runImport }

// importRun is the state of one 'sessctl import'.
type importRun struct {
	e        *env
	dryRun   bool
	asJSON   bool
	opts     importer.Options
	im       *importer.Importer
	out      *bufio.Writer
	progress io.Writer // stderr on a terminal, else nil
	source   string    // the source being imported, for progress
	lastProg time.Time // when progress inside a session was last drawn

	rep    *importer.Report
	locked bool
	failed bool
}

func runImport(e *env, args []string) int {
	fs := e.flags(importCommand)
	all := fs.Bool("all", false, "import every store found on this machine")
	dryRun := fs.Bool("dry-run", false, "show what would be imported; write nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	cwd := fs.String("cwd", "", "working directory for sessions whose source records none (default: your home directory)")
	history := fs.Bool("history", false, "claude: also import the prompts of history.jsonl whose transcripts are gone")
	if code := e.parse(importCommand, fs, args); code >= 0 {
		return code
	}
	home, _ := os.UserHomeDir()
	loc := migrate.Locator{Getenv: os.Getenv, Home: home, GOOS: runtime.GOOS}
	r := &importRun{e: e, dryRun: *dryRun, asJSON: *asJSON, rep: importer.NewReport(*dryRun)}
	r.opts.DryRun = *dryRun
	r.opts.Command = "sessctl import"
	r.opts.Import.Cwd = home
	r.opts.Import.History = *history
	if *cwd != "" {
		abs, err := cwdArg(*cwd)
		if err != nil {
			return e.fail(err)
		}
		r.opts.Import.Cwd = abs
	}
	agentDir, err := layout.AgentDir(layout.AgentPi)
	if err != nil {
		return e.fail(err)
	}
	r.opts.AgentDir = agentDir
	if t := terminal(e.stderr); t != nil && !*asJSON {
		r.progress = t
		r.opts.Import.Progress = r.readProgress
	}
	r.im = importer.New(r.opts)

	var jobs []sources.Found
	var looked []string
	switch {
	case *all:
		if fs.NArg() != 0 {
			return e.usageError("--all takes no SOURCE or PATH")
		}
		jobs, looked = sources.Find(loc, sources.All()...)
		if len(jobs) == 0 {
			if *asJSON {
				r.out = bufio.NewWriter(e.stdout)
				r.printJSON()
				r.out.Flush()
				return exitOK
			}
			fmt.Fprintf(e.stdout, "No sessions to import: none of %s keeps a store on this machine.\nLooked in:\n  %s\n",
				strings.Join(sources.Titles(), ", "), strings.Join(quotePaths(looked), "\n  "))
			return exitOK
		}
	default:
		if fs.NArg() < 1 || fs.NArg() > 2 {
			return e.usageError("expected SOURCE [PATH], or --all")
		}
		src, ok := sources.ByName(fs.Arg(0))
		if !ok {
			return e.usageError("unknown source %s (one of %s)", human.Quote(fs.Arg(0)), strings.Join(sources.Names(), ", "))
		}
		if *history && src.Name() != "claude" {
			return e.usageError("--history is for claude only (Claude Code's history.jsonl)")
		}
		if jobs, err = sources.Stores(loc, src, fs.Arg(1)); err != nil {
			return e.fail(err)
		}
	}

	r.out = bufio.NewWriter(e.stdout)
	defer r.out.Flush()
	for _, j := range jobs {
		if err := e.ctx.Err(); err != nil {
			return e.fail(err)
		}
		r.store(j.Source, j.Path)
	}
	if r.progress != nil {
		fmt.Fprint(r.progress, "\r\033[K")
	}
	if r.asJSON {
		r.printJSON()
	} else {
		r.printSummary()
	}
	switch {
	case r.failed:
		return exitFailure
	case r.locked:
		return exitLocked
	case r.rep.Summary.Damaged > 0:
		return exitCorrupt
	}
	return exitOK
}

// store imports every session of one store.
func (r *importRun) store(src migrate.Source, path string) {
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	r.rep.AddStore(src.Name(), path)
	r.source = src.Name()
	r.im.Store(r.e.ctx, src, path, importer.Handler{
		Session: r.write,
		Skip:    r.skip,
		Damage:  r.damage,
		Fail: func(err error) {
			r.warn(err)
			r.failed = true
		},
		Warn: r.warn,
	})
}

// skip reports a source session that gave nothing to import.
func (r *importRun) skip(source string, sk *migrate.Skip) {
	r.rep.AddSkip(source, sk)
	if !r.asJSON {
		r.clearProgress()
		fmt.Fprintln(r.out, r.rep.Skipped[len(r.rep.Skipped)-1].Text())
	}
}

// damage reports damaged source data that was skipped.
func (r *importRun) damage(d *migrate.Damage) {
	r.rep.AddDamage(d)
	if !r.asJSON {
		r.clearProgress()
		fmt.Fprintf(r.e.stderr, "sessctl: import: damaged source data, skipped: %v\n", d)
	}
}

func (r *importRun) warn(err error) {
	if !r.asJSON {
		r.clearProgress()
		fmt.Fprintf(r.e.stderr, "sessctl: import: %v\n", err)
		if h := hintFor(err); h != "" && errors.Is(err, engine.ErrLocked) {
			fmt.Fprintf(r.e.stderr, "hint: %s\n", h)
		}
	}
}

// readProgress shows how far the importer has read a session's source
// file, at most ten times a second: a session of hundreds of megabytes
// takes a while.
func (r *importRun) readProgress(path string, done, total int64) {
	if r.progress == nil || done < total && time.Since(r.lastProg) < 100*time.Millisecond {
		return
	}
	r.lastProg = time.Now()
	fmt.Fprintf(r.progress, "\r\033[Kimporting %s: %s; reading %s %.1f/%.1f MB",
		r.source, human.Plural(r.rep.Summary.Sessions, "session", "sessions"), human.QuotePath(filepath.Base(path)), float64(done)/(1<<20), float64(total)/(1<<20))
}

func (r *importRun) clearProgress() {
	if r.progress != nil {
		fmt.Fprint(r.progress, "\r\033[K")
	}
}

// write reports one imported session.
func (r *importRun) write(res importer.Result) {
	line := r.rep.AddSession(res)
	switch res.Status {
	case importer.StatusKept:
		r.warn(fmt.Errorf("kept %v", res.Err))
	case importer.StatusFailed:
		r.warn(res.Err)
		if errors.Is(res.Err, engine.ErrLocked) {
			r.locked = true
		} else {
			r.failed = true
		}
	}
	if !r.asJSON {
		r.clearProgress()
		fmt.Fprintln(r.out, line.Text())
		if r.progress != nil {
			r.out.Flush()
			fmt.Fprintf(r.progress, "importing %s: %s", line.Source, human.Plural(r.rep.Summary.Sessions, "session", "sessions"))
		}
	}
}

// printSummary prints the summary line (importer.Report.WriteSummary).
func (r *importRun) printSummary() { _ = r.rep.WriteSummary(r.out) }

// printJSON prints the report as JSON (importer.Report.WriteJSON).
func (r *importRun) printJSON() { _ = r.rep.WriteJSON(r.out) }
