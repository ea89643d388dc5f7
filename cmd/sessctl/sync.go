package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/redact"
	"github.com/sessctl/sessctl/replica"
)

var syncCommand = &command{
	name:    "sync",
	summary: "replicate sessions to S3-compatible storage or a directory, and merge them back",
	usage:   helpText("sync"),
}

func init() { register(syncCommand).run = runSync }

// cwdMaps is the repeatable --cwd-map flag.
type cwdMaps []replica.CwdMapping

func (c *cwdMaps) String() string { return "" }
func (c *cwdMaps) Set(s string) error {
	m, err := replica.ParseCwdMap(s)
	if err != nil {
		return err
	}
	*c = append(*c, m)
	return nil
}

func runSync(e *env, args []string) int {
	fs := e.flags(syncCommand)
	store := fs.String("store", "pi", "which sessions: `pi`, indusagi, agentuse, all or a directory (both formats below it)")
	remote := fs.String("remote", "", "the remote: s3://`BUCKET/PREFIX`, or a directory (file:///DIR, /DIR, ./DIR)")
	var maps cwdMaps
	fs.Var(&maps, "cwd-map", "restore sessions of cwd `OLD=NEW` (repeatable)")
	redactFlag := fs.Bool("redact", false, "mask likely secrets in what is uploaded")
	identity := fs.String("age-identity", "", "encrypt to and decrypt with the age identity in `FILE`")
	asJSON := fs.Bool("json", false, "print JSON")
	olderThan := fs.String("older-than", "", "prune: delete the remote sessions not written for `AGE` (90d, 12h, 30m)")
	grace := fs.String("grace", "1h", "prune: spare the objects written less than `AGE` ago")
	dryRun := fs.Bool("dry-run", false, "prune: say what would be deleted, delete nothing")
	if code := e.parse(syncCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() < 1 {
		return e.usageError("expected one of push, pull, status, prune, delete")
	}
	verb := fs.Arg(0)
	switch verb {
	case "push", "pull", "status", "prune":
		if fs.NArg() != 1 {
			return e.usageError("unexpected argument %s", human.Quote(fs.Arg(1)))
		}
	case "delete":
		if fs.NArg() < 2 {
			return e.usageError("sync delete needs the SESSION(s) to delete from the remote")
		}
	default:
		return e.usageError("unknown sync command %s: expected push, pull, status, prune or delete", human.Quote(verb))
	}
	if *remote == "" {
		return e.usageError("--remote s3://BUCKET/PREFIX (or a directory) is required: nothing is uploaded unless configured")
	}
	var po replica.PruneOptions
	if verb == "prune" {
		var err error
		if *olderThan != "" {
			if po.OlderThan, err = human.ParseAge(*olderThan); err != nil {
				return e.usageError("--older-than: %v", err)
			}
		}
		if po.Grace, err = human.ParseAge(*grace); err != nil {
			return e.usageError("--grace: %v", err)
		}
		po.DryRun = *dryRun
	} else if *olderThan != "" || *dryRun || *grace != "1h" {
		return e.usageError("--older-than, --grace and --dry-run are for sync prune")
	}
	opts := replica.Options{Remote: *remote, Backends: remoteBackends(), CwdMap: maps}
	// A pull may create the directory: it need not exist.
	places, err := layout.ResolvePlaces(*store)
	if err != nil {
		if errors.Is(err, layout.ErrUnknownPlace) {
			return e.usageError("%v", err)
		}
		return e.fail(err)
	}
	opts.SetPlaces(places)
	if cache, err := os.UserCacheDir(); err == nil {
		opts.StateDir = filepath.Join(cache, "sessctl", "sync")
	}
	if *redactFlag {
		opts.Transform = redact.Line
	}
	if *identity != "" {
		if err := opts.LoadIdentity(*identity); err != nil {
			return e.fail(err)
		}
	}
	r, err := replica.Open(opts)
	if errors.Is(err, replica.ErrBadRemote) {
		return e.usageError("%v", err)
	}
	if err != nil {
		return e.fail(err)
	}
	defer r.Close()
	var rep *replica.Report
	switch verb {
	case "push":
		rep, err = r.Push(e.ctx)
	case "pull":
		rep, err = r.Pull(e.ctx)
	case "prune":
		rep, err = r.Prune(e.ctx, po)
	case "delete":
		rep, err = r.Delete(e.ctx, fs.Args()[1:])
	default:
		rep, err = r.Status(e.ctx)
	}
	if err != nil {
		return e.fail(err)
	}
	var repls []replica.ReplicatorStats
	if verb == "status" {
		if repls, err = r.Replicators(); err != nil {
			fmt.Fprintf(e.stderr, "sessctl: sync: warning: %v\n", err)
		}
	}
	if po.DryRun {
		verb = "prune --dry-run"
	}
	return reportSync(e, verb, rep, repls, *asJSON)
}

// reportSync prints the report of a run: its problems on stderr, the
// sessions on stdout (as JSON with asJSON), and a hint when sessions
// failed or remote lines were refused. It returns the exit code.
func reportSync(e *env, verb string, rep *replica.Report, repls []replica.ReplicatorStats, asJSON bool) int {
	failed, refused := printSyncProblems(e, rep)
	if asJSON {
		_ = rep.WriteJSON(e.stdout, repls)
	} else {
		printSyncText(e, verb, rep, repls)
	}
	if refused > 0 {
		fmt.Fprintf(e.stderr, "hint: %s left out of the local files, not being complete entry lines; the remote copies are unchanged\n", human.Plural(refused, "remote line was", "remote lines were"))
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "hint: %s failed; run again to retry them (what succeeded is kept)\n", human.Plural(failed, "session", "sessions"))
		return exitFailure
	}
	if len(rep.Skipped) > 0 {
		return exitFailure // not everything was synced
	}
	if refused > 0 {
		return exitCorrupt
	}
	return exitOK
}

// printSyncProblems reports on stderr the sessions that failed, the
// conflicts, the remote lines refused, the warnings and what was skipped
// of a run (replica.Report.Problems), and returns how many sessions
// failed and lines were refused.
func printSyncProblems(e *env, rep *replica.Report) (failed, refused int) {
	probs := rep.Problems()
	for _, l := range probs.Lines {
		fmt.Fprintf(e.stderr, "sessctl: sync: %s\n", l)
	}
	return probs.Failed, probs.Refused
}

// printSyncText prints the report of a run for people on stdout
// (replica.Report.WriteText), and the replicators' last errors on stderr.
func printSyncText(e *env, verb string, rep *replica.Report, repls []replica.ReplicatorStats) {
	_ = rep.WriteText(e.stdout, verb, repls)
	for _, x := range repls {
		if x.LastError != "" {
			fmt.Fprintf(e.stderr, "sessctl: sync: replicator pid %d: last error: %s\n", x.PID, x.LastError)
		}
	}
}

var _ flag.Value = (*cwdMaps)(nil)
