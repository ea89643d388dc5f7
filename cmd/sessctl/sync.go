package main

import (
	"encoding/json"
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
	summary: "replicate sessions to S3-compatible storage, and merge them back",
	usage: `
Usage: sessctl sync push|pull|status --remote s3://BUCKET/PREFIX [--store pi|indusagi|agentuse|all|DIR]
                    [--cwd-map OLD=NEW]... [--redact] [--age-identity FILE] [--json]

push uploads what the remote lacks: the lines appended to each session
since the last push (new immutable objects, never whole files) and a new
manifest per changed session. It never changes a local file.

pull brings the remote's sessions into the store: sessions the store lacks
are restored in pi's directory for their cwd (--cwd-map OLD=NEW restores a
session recorded under OLD, or below it, under NEW), and sessions both
sides appended to are merged by entry id under the session's lock: the
entries the store lacks are appended, parents before children, each line's
bytes unchanged. The local leaf stays the active one; when the other
machine's last entry is on another branch, a label entry "sessctl sync:
remote tip" on it is appended below the local leaf. The same id with
different bytes is a conflict: both versions are kept under derived ids
and reported. Nothing local is ever cut or rewritten.

status compares both sides from one listing and says, per session, what
push or pull would do. A full sync is pull, then push.

The object store is configured as every S3 tool is: AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), AWS_REGION, and AWS_ENDPOINT_URL
for a non-AWS endpoint (MinIO, R2, GCS), which is addressed path-style.
Nothing is uploaded unless a command is given a --remote.

--store picks the sessions: pi (default), indusagi, agentuse (AgentUse
session directories), all (pi and agentuse), or an agent directory DIR
(its sessions/ folder). --redact masks likely secrets in every line before
it is uploaded (the export redaction); the local files keep them.
--age-identity FILE (an age identity file, age-keygen's output) encrypts
every object to the identity's recipient and decrypts with it, so the
bucket's operator cannot read transcripts.

What the last run saw is kept under the user cache directory
(sessctl/sync), so that an unchanged store is compared with one listing;
without it the sides are compared in full.

--json prints {"sessions": [{"kind", "name", "path", "state", "pushed",
"pulled", "created", "conflicts": [{"id", "copies"}], "error"}],
"requests", "uploaded", "downloaded", "warnings": [string]}.

Exit status: 0 when every session synced (conflicts are reported, not
failures), 1 when a session or the remote failed, 2 for a usage mistake.

Examples:
  AWS_ENDPOINT_URL=http://127.0.0.1:9000 sessctl sync push --remote s3://sessions/me
  sessctl sync pull --remote s3://sessions/me --cwd-map /Users/me=/home/me
  sessctl sync status --remote s3://sessions/me --json
`,
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
	remote := fs.String("remote", "", "the remote, s3://`BUCKET/PREFIX`")
	var maps cwdMaps
	fs.Var(&maps, "cwd-map", "restore sessions of cwd `OLD=NEW` (repeatable)")
	redactFlag := fs.Bool("redact", false, "mask likely secrets in what is uploaded")
	identity := fs.String("age-identity", "", "encrypt to and decrypt with the age identity in `FILE`")
	asJSON := fs.Bool("json", false, "print JSON")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0]) // the verb may come first
	}
	if code := e.parse(syncCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one of push, pull, status")
	}
	verb := fs.Arg(0)
	if verb != "push" && verb != "pull" && verb != "status" {
		return e.usageError("unknown sync command %q: expected push, pull or status", verb)
	}
	if *remote == "" {
		return e.usageError("--remote s3://BUCKET/PREFIX is required: nothing is uploaded unless configured")
	}
	if _, _, err := replica.ParseRemote(*remote); err != nil {
		return e.usageError("%v", err)
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
	failed := 0
	for _, s := range rep.Sessions {
		if s.Err != nil {
			failed++
			fmt.Fprintf(e.stderr, "sessctl: sync: %s %s: %v\n", s.Kind, s.Name, s.Err)
		}
		for _, c := range s.Conflicts {
			fmt.Fprintf(e.stderr, "sessctl: sync: %s %s: entry %s differs on the two sides; both kept (as %s)\n", s.Kind, s.Name, c.ID, strings.Join(c.Copies, ", "))
		}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(e.stderr, "sessctl: sync: warning: %v\n", w)
	}
	if *asJSON {
		printSyncJSON(e, rep)
	} else {
		printSyncText(e, verb, rep)
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "hint: %d %s failed; run again to retry them (what succeeded is kept)\n", failed, human.Plural(failed, "session", "sessions"))
		return exitFailure
	}
	return exitOK
}

func printSyncText(e *env, verb string, rep *replica.Report) {
	for _, s := range rep.Sessions {
		if s.State == "in sync" {
			continue
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
		fmt.Fprintf(e.stdout, "%-12s %s%s\n", s.State, where, detail)
	}
	var parts []string
	for _, c := range rep.Tally() {
		parts = append(parts, fmt.Sprintf("%d %s", c.N, c.State))
	}
	if len(parts) == 0 {
		parts = append(parts, "no sessions")
	}
	fmt.Fprintf(e.stdout, "%s: %s; %d requests, %s up, %s down\n", verb, strings.Join(parts, ", "), rep.Requests, byteSize(rep.Uploaded), byteSize(rep.Downloaded))
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
