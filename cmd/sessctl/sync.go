package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
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
	store := fs.String("store", "pi", "which sessions: `pi`, indusagi, agentuse, all or an agent directory")
	remote := fs.String("remote", "", "the remote: s3://`BUCKET/PREFIX`, or a directory (file:///DIR, /DIR, ./DIR)")
	var maps cwdMaps
	fs.Var(&maps, "cwd-map", "restore sessions of cwd `OLD=NEW` (repeatable)")
	redactFlag := fs.Bool("redact", false, "mask likely secrets in what is uploaded")
	identity := fs.String("age-identity", "", "encrypt to and decrypt with the age identity in `FILE`")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(syncCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one of push, pull, status")
	}
	verb := fs.Arg(0)
	if verb != "push" && verb != "pull" && verb != "status" {
		return e.usageError("unknown sync command %s: expected push, pull or status", human.Quote(verb))
	}
	if *remote == "" {
		return e.usageError("--remote s3://BUCKET/PREFIX (or a directory) is required: nothing is uploaded unless configured")
	}
	opts := replica.Options{Remote: *remote, S3: replica.EnvS3Config(os.LookupEnv), CwdMap: maps}
	if err := opts.SetStore(*store); err != nil {
		return e.usageError("%v", err)
	}
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
	default:
		rep, err = r.Status(e.ctx)
	}
	if err != nil {
		return e.fail(err)
	}
	return reportSync(e, verb, rep, *asJSON)
}

// reportSync prints the report of a run: its problems on stderr, the
// sessions on stdout (as JSON with asJSON), and a hint when sessions
// failed or remote lines were refused. It returns the exit code.
func reportSync(e *env, verb string, rep *replica.Report, asJSON bool) int {
	failed, refused := printSyncProblems(e, rep)
	if asJSON {
		printSyncJSON(e, rep)
	} else {
		printSyncText(e, verb, rep)
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

func printSyncText(e *env, verb string, rep *replica.Report) {
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
	fmt.Fprintf(e.stdout, "%s: %s; %s, %s up, %s down\n", verb, strings.Join(parts, ", "), human.Plural(int(rep.Requests), "request", "requests"), byteSize(rep.Uploaded), byteSize(rep.Downloaded))
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

func printSyncJSON(e *env, rep *replica.Report) {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep.JSON())
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
