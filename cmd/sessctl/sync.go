package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
			if po.OlderThan, err = parseAge(*olderThan); err != nil {
				return e.usageError("--older-than: %v", err)
			}
		}
		if po.Grace, err = parseAge(*grace); err != nil {
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

// parseAge parses a duration that may count days: 90d, 1d12h, 36h, 30m.
func parseAge(s string) (time.Duration, error) {
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s is not an age such as 90d, 12h or 30m", human.Quote(s))
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, nil
		}
	}
	t, err := time.ParseDuration(s)
	if err != nil || t < 0 {
		return 0, fmt.Errorf("%s is not an age such as 90d, 12h or 30m", human.Quote(s))
	}
	return days + t, nil
}

// reportSync prints the report of a run: its problems on stderr, the
// sessions on stdout (as JSON with asJSON), and a hint when sessions
// failed or remote lines were refused. It returns the exit code.
func reportSync(e *env, verb string, rep *replica.Report, repls []replica.ReplicatorStats, asJSON bool) int {
	failed, refused := printSyncProblems(e, rep)
	if asJSON {
		printSyncJSON(e, rep, repls)
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
// of a run, and returns how many sessions failed and lines were refused.
func printSyncProblems(e *env, rep *replica.Report) (failed, refused int) {
	for _, s := range rep.Sessions {
		if s.Err != nil {
			failed++
			fmt.Fprintf(e.stderr, "sessctl: sync: %s %s: %v\n", s.Kind, human.QuotePath(s.Name), s.Err)
		}
		for _, c := range s.Conflicts {
			kept := ""
			switch {
			case len(c.Copies) == 0:
			case s.Kind == replica.KindAgentUse:
				kept = "; both kept (the remote one as " + strings.Join(quotePaths(c.Copies), ", ") + ")"
			default:
				kept = "; both kept (as " + strings.Join(quotePaths(c.Copies), ", ") + ")"
			}
			fmt.Fprintf(e.stderr, "sessctl: sync: %s %s: %s %s differs on the two sides%s\n",
				s.Kind, human.QuotePath(s.Name), conflictNoun(s.Kind), human.QuotePath(c.ID), kept)
		}
		for _, l := range s.Refused {
			refused++
			fmt.Fprintf(e.stderr, "sessctl: sync: %s %s: refused remote %s\n", s.Kind, human.QuotePath(s.Name), l)
		}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(e.stderr, "sessctl: sync: warning: %v\n", w)
	}
	for _, w := range rep.Skipped {
		fmt.Fprintf(e.stderr, "sessctl: sync: skipped %v\n", w)
	}
	return failed, refused
}

func printSyncText(e *env, verb string, rep *replica.Report, repls []replica.ReplicatorStats) {
	for _, s := range rep.Sessions {
		if s.State == "in sync" || verb != "status" && (s.State == "new local" || s.State == "new remote") {
			continue // nothing moved (counted below)
		}
		detail := ""
		switch {
		case s.Pushed > 0 && s.Pulled > 0:
			detail = fmt.Sprintf(" (%d up, %d down)", s.Pushed, s.Pulled)
		case s.Pushed > 0:
			detail = fmt.Sprintf(" (%d up)", s.Pushed)
		case s.Pulled > 0:
			detail = fmt.Sprintf(" (%d down)", s.Pulled)
		}
		where := s.Path
		if where == "" {
			where = s.Name
		}
		fmt.Fprintf(e.stdout, "%-12s %s%s\n", s.State, human.QuotePath(where), detail)
	}
	var parts []string
	for _, c := range rep.Tally() {
		parts = append(parts, fmt.Sprintf("%d %s", c.N, c.State))
	}
	if len(parts) == 0 {
		parts = append(parts, "no sessions")
	}
	if strings.HasPrefix(verb, "prune") {
		what := "collected"
		if verb != "prune" {
			what = "to collect; nothing deleted"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", human.Plural(len(rep.Collected), "object", "objects"), what, byteSize(rep.CollectedBytes)))
	}
	fmt.Fprintf(e.stdout, "%s: %s; %s, %s up, %s down\n", verb, strings.Join(parts, ", "), requestsText(rep.Requests, rep.RequestKinds), byteSize(rep.Uploaded), byteSize(rep.Downloaded))
	for _, x := range repls {
		state := "running"
		if x.Closed {
			state = "closed"
		}
		fmt.Fprintf(e.stdout, "replicator pid %d on %s (%s, updated %s): %s shipped, %s for %s since %s\n",
			x.PID, human.Quote(x.Host), state, x.Updated.Local().Format("15:04:05"), human.Plural(int(x.Shipments), "generation", "generations"),
			requestsText(replica.RequestCounts(x.Requests).Total(), replica.RequestCounts(x.Requests)), human.Plural(x.Sessions, "session", "sessions"), x.Started.Local().Format("2006-01-02 15:04:05"))
		if x.LastError != "" {
			fmt.Fprintf(e.stderr, "sessctl: sync: replicator pid %d: last error: %s\n", x.PID, x.LastError)
		}
	}
}

// requestsText says how many requests (total) of which kinds were sent.
func requestsText(total int64, c replica.RequestCounts) string {
	out := human.Plural(int(total), "request", "requests")
	var kinds []string
	for _, k := range []struct {
		n    int64
		name string
	}{{c.Get, "GET"}, {c.Put, "PUT"}, {c.List, "LIST"}, {c.Delete, "DELETE"}} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.name))
		}
	}
	if len(kinds) > 0 {
		out += " (" + strings.Join(kinds, ", ") + ")"
	}
	return out
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func printSyncJSON(e *env, rep *replica.Report, repls []replica.ReplicatorStats) {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	j := rep.JSON()
	j.Replicators = append(j.Replicators, repls...)
	_ = enc.Encode(j)
}

var _ flag.Value = (*cwdMaps)(nil)

// conflictNoun names what a conflict's ID is: an entry of a JSONL
// session, a file of an AgentUse one.
func conflictNoun(kind string) string {
	if kind == replica.KindAgentUse {
		return "file"
	}
	return "entry"
}
