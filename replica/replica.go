package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Options configure a Remote. Nothing leaves the machine unless a Remote
// is opened with them and asked to Push.
type Options struct {
	// Remote names the remote: a URL of a scheme in Backends
	// (s3://bucket/prefix: an S3-compatible bucket, with package
	// replica/s3's Backend), or a directory: file:///path, or an
	// absolute path, or one starting with ./ or ../ (see NewDirClient).
	// It is required; with Client set it only names the remote, in
	// reports and in the state kept in StateDir, and may be any string
	// that identifies the store Client reaches.
	Remote string
	// Backends open the remotes of the URL schemes they are keyed by
	// (s3: replica/s3.Backend). Package replica imports no backend of
	// its own but the directory one, so that a program links only the
	// clients it passes here.
	Backends map[string]Backend
	// Client, when set, is the object store, instead of the one Remote
	// names: a program's own Client, or one wrapping replica/s3's or
	// NewDirClient's.
	Client Client

	// AgentDir is the pi (or indusagi) agent directory whose sessions/
	// replicate; "" leaves JSONL sessions out.
	AgentDir string
	// AgentUseDir is the AgentUse data root whose session directories
	// replicate; "" leaves them out.
	AgentUseDir string
	// Places, when set, are what replicates instead of AgentDir and
	// AgentUseDir (layout.ResolvePlaces names them; SetPlaces sets
	// them): the session files below each FormatJSONL place's root, and
	// the AgentUse sessions <root>/<project hash>/session/<dir> of each
	// FormatAgentUse place's root. A session a pull creates goes into
	// the first place of its format (a JSONL session into the directory
	// of its cwd there, as pi's store keeps it).
	Places []layout.Place
	// StateDir keeps what the last run knew of both sides (a cache, under
	// the user cache directory in the CLI), so that an unchanged store is
	// compared with one listing. "" keeps no state: every session is
	// compared in full.
	StateDir string

	// CwdMap rewrites the cwd of sessions a pull creates: a session whose
	// cwd is Old, or below it, is restored under New (its header's cwd
	// and pi's directory for it). The first matching entry wins.
	CwdMap []CwdMapping

	// Transform, when set, is applied to every line before it is uploaded
	// (redaction). An error fails the session's push: nothing of it is
	// uploaded. A remote line equal to the transformed local line counts
	// as the same entry when pulling.
	Transform func(line []byte) ([]byte, error)

	// Recipients, when set, encrypt every object uploaded (age);
	// Identities decrypt what is downloaded. A remote holding encrypted
	// objects cannot be read without an identity, and one holding plain
	// objects is refused while Recipients are set.
	Recipients []age.Recipient
	Identities []age.Identity

	// Host is recorded in the manifests uploaded (default: os.Hostname).
	Host string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FS is the local filesystem (the store's, and a directory
	// remote's); nil means vfs.OS().
	FS vfs.FS
	// Verify makes every run read and check every segment of every
	// session (no shortcut from the last run's state). A push or sync
	// that finds a torn or foreign segment publishes a new generation
	// built from the local copy and the readable segments.
	Verify bool

	// Parallel is how many sessions are transferred at once; 0 means 16.
	Parallel int

	// SegmentSize bounds the segments a push or a compaction writes (a
	// longer line is a segment of its own), and with it the memory a
	// session's transfer takes: 0 means 16 MiB.
	SegmentSize int
	// InlineMax is how many bytes of lines a manifest may carry itself
	// (inline segments), so that a small push is one request instead of
	// two; lines beyond it move into a data object. 0 means 64 KiB;
	// negative means none. A sessctl of v0.1.0 cannot read inline
	// segments: its pull of such a session fails naming the object it
	// looked for, and changes nothing.
	InlineMax int
}

// CwdMapping is one --cwd-map OLD=NEW.
type CwdMapping struct{ Old, New string }

// ParseCwdMap parses OLD=NEW.
func ParseCwdMap(s string) (CwdMapping, error) {
	o, n, ok := strings.Cut(s, "=")
	if !ok || o == "" || n == "" {
		return CwdMapping{}, fmt.Errorf("cwd map %q: want OLD=NEW", s)
	}
	return CwdMapping{Old: strings.TrimRight(o, "/\\"), New: strings.TrimRight(n, "/\\")}, nil
}

// mapCwd applies the first matching mapping.
func (o *Options) mapCwd(cwd string) string {
	for _, m := range o.CwdMap {
		if cwd == m.Old {
			return m.New
		}
		if rest, ok := strings.CutPrefix(cwd, m.Old); ok && (strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "\\")) {
			return m.New + rest
		}
	}
	return cwd
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) fs() vfs.FS {
	if o.FS != nil {
		return o.FS
	}
	return vfs.OS()
}

// Remote is a store replicated to one bucket prefix. It is safe for
// concurrent use; runs of one Remote are serialised.
type Remote struct {
	opts  Options
	b     *bucket
	state string
	// legacyState is the state file an older sessctl kept for the same
	// store and remote, read when state does not exist yet.
	legacyState string
	run         chan struct{} // a one-slot semaphore: one run at a time
}

// Open prepares a Remote. It does not touch the network or the remote
// directory. An opts.Remote that is neither a URL of a scheme in
// opts.Backends nor a directory is ErrBadRemote.
func Open(opts Options) (*Remote, error) {
	c := opts.Client
	if c == nil {
		var err error
		if c, err = newClient(opts.Remote, opts.Backends, opts.fs()); err != nil {
			return nil, err
		}
	} else if opts.Remote == "" {
		return nil, fmt.Errorf("open remote: no name: %w", ErrBadRemote)
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 16
	}
	r := &Remote{opts: opts, b: &bucket{c: c, remote: opts.Remote, recipients: opts.Recipients, identities: opts.Identities, st: &stats{}}, run: make(chan struct{}, 1)}
	if opts.StateDir != "" {
		r.state = statePath(opts.StateDir, &r.opts)
		r.legacyState = legacyStatePath(opts.StateDir, &r.opts)
	}
	return r, nil
}

// Close releases the Remote. It is idempotent.
func (r *Remote) Close() error { return nil }

// Report says what a run found and did.
type Report struct {
	Sessions []SessionReport
	// Requests counts the requests sent (RequestKinds by kind), Uploaded
	// and Downloaded the object bytes moved.
	Requests             int64
	RequestKinds         RequestCounts
	Uploaded, Downloaded int64
	// Warnings are objects and sessions the run went past.
	Warnings []Warning
	// Skipped are the local files and directories the run could not read
	// or does not replicate (symbolic links, named pipes and other
	// special files, names that cannot be object keys): what they hold
	// was not synced.
	Skipped []Warning
	// Collected are the objects a Prune deleted (or, with DryRun, would
	// delete), and CollectedBytes the data objects' bytes among them.
	Collected      []string
	CollectedBytes int64
}

// SessionReport is one session's part of a run.
type SessionReport struct {
	Kind, Name string
	// Path is the local file or directory ("" when there is none).
	Path string
	// State is, for Status, what a sync would do: "in sync", "push",
	// "pull", "push+pull", "new local", "new remote", "compare" (no
	// record of the last sync: the sides are compared in full). After a
	// Push or Pull it is "pushed", "pulled", "pushed+pulled", "in sync"
	// or "failed", or, as Status says, "new local" after a Pull of a
	// session the remote has no copy of and "new remote" after a Push of
	// one the store lacks.
	State string
	// Pushed and Pulled count the lines (JSONL) or files (AgentUse)
	// moved; Created is true when a pull created the local copy.
	Pushed, Pulled int
	Created        bool
	// Healed is true when the remote copy held an unreadable (torn or
	// foreign) segment and this run published a new generation built
	// from the local copy and the readable segments.
	Healed bool
	// Conflicts lists entries both sides hold under one id with
	// different bytes; both versions are kept (see Conflict).
	Conflicts []Conflict
	// Refused lists the lines of the remote copy a pull left out of the
	// local file because they are not complete entry lines.
	Refused []RefusedLine
	// Err is why the session failed; the run went on with the others.
	Err error
}

// Conflict is an entry id both sides hold with different bytes (or a
// remote copy holds twice). The line that had the id first keeps it;
// each version is also appended under a new id derived from it and its
// bytes (Copies), so both survive on every machine. For an AgentUse
// session, ID is the path of a file both sides changed, and Copies the
// path the remote version was written under beside the local one.
type Conflict struct {
	ID     string
	Copies []string
}

type mode int

const (
	modeStatus mode = iota
	modePush
	modePull
	modeSync // pull, then push
)

// Status compares the store with the remote without transferring
// anything but the listing.
func (r *Remote) Status(ctx context.Context) (*Report, error) { return r.do(ctx, modeStatus) }

// Push uploads the lines and files the remote lacks. It never changes a
// local file.
func (r *Remote) Push(ctx context.Context) (*Report, error) { return r.do(ctx, modePush) }

// Pull brings what the remote holds into the store: new sessions are
// created, sessions both sides appended to are merged (see the package
// documentation). It uploads nothing.
func (r *Remote) Pull(ctx context.Context) (*Report, error) { return r.do(ctx, modePull) }

// Sync pulls and then pushes: afterwards both sides hold every entry.
func (r *Remote) Sync(ctx context.Context) (*Report, error) { return r.do(ctx, modeSync) }

func (r *Remote) lockRun(ctx context.Context) error {
	select {
	case r.run <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Remote) unlockRun() { <-r.run }

func (r *Remote) do(ctx context.Context, m mode) (*Report, error) {
	if err := r.lockRun(ctx); err != nil {
		return nil, err
	}
	defer r.unlockRun()
	fsys := r.opts.fs()
	st, err := loadState(fsys, r.state, r.legacyState, r.opts.Remote)
	if err != nil {
		return nil, err
	}
	req0, up0, down0 := r.b.st.counts(), r.b.st.uploaded.Load(), r.b.st.downloaded.Load()
	rep := &Report{}
	if !st.Marker {
		ok, err := r.checkMarker(ctx, m)
		if err != nil {
			return nil, err
		}
		st.Marker = ok
	}
	heads, warns, err := r.b.list(ctx)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, warns...)
	tombs, warns, err := r.b.listKeys(ctx, "t/")
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, warns...)
	locals, lwarns, skipped, err := r.scanLocal(ctx)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, lwarns...)
	rep.Skipped = append(rep.Skipped, skipped...)

	ids := map[string]bool{}
	for id := range heads {
		// A session of a kind these options keep nowhere (a JSONL one
		// with only AgentUse places, or the other way) is left out: it
		// has no directory to be pulled into.
		if _, dead := tombs[id]; !dead && r.opts.keeps(id) {
			ids[id] = true
		}
	}
	for id := range locals {
		ids[id] = true
	}
	order := make([]string, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Strings(order)
	reports := make([]SessionReport, len(order))
	states := make([]*sessionState, len(order))
	sem := make(chan struct{}, r.opts.Parallel)
	done := make(chan struct{})
	pending := 0
	for i, id := range order {
		kind, name, _ := strings.Cut(id, "/")
		loc, h, old := locals[id], heads[id], st.Sessions[id]
		if _, dead := tombs[id]; dead {
			// Deleted from the remote: a tombstone, and maybe manifests
			// an older sessctl wrote since, which do not count.
			reports[i], states[i] = r.deadSession(ctx, m, kind, name, loc, old)
			if reports[i].Err != nil {
				rep.Warnings = append(rep.Warnings, Warning{Key: loc.path, Err: reports[i].Err})
				reports[i].Err = nil
			}
			continue
		}
		old = r.settle(ctx, old, h)
		if fast, ok := r.fastPath(m, kind, name, loc, h, old); ok {
			reports[i], states[i] = fast, old
			continue
		}
		pending++
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			reports[i], states[i] = r.session(ctx, m, kind, name, loc, h, old)
		}()
	}
	for ; pending > 0; pending-- {
		<-done
	}
	for i, id := range order {
		rep.Sessions = append(rep.Sessions, reports[i])
		if m != modeStatus {
			if states[i] != nil {
				st.Sessions[id] = states[i]
			} else if _, dead := tombs[id]; dead || (locals[id] == nil && heads[id] == nil) {
				delete(st.Sessions, id)
			}
		}
	}
	if m != modeStatus {
		if err := saveState(fsys, r.state, st); err != nil {
			rep.Warnings = append(rep.Warnings, Warning{Key: r.state, Err: err})
		}
	}
	rep.RequestKinds = r.b.st.counts().sub(req0)
	rep.Requests = rep.RequestKinds.Total()
	rep.Uploaded = r.b.st.uploaded.Load() - up0
	rep.Downloaded = r.b.st.downloaded.Load() - down0
	return rep, nil
}

// deadSession handles a session the local store has and the remote
// deleted (a tombstone): it is never pushed; a pull moves the local copy
// of a pi session deleted on purpose (ReasonDelete) to the trash when it
// holds nothing the remote lacked by the last sync's record, and keeps it
// otherwise, saying why in Err (reported as a warning). The state
// remembers the verdict, so that the tombstone is read once.
func (r *Remote) deadSession(ctx context.Context, m mode, kind, name string, loc *local, old *sessionState) (SessionReport, *sessionState) {
	rep := SessionReport{Kind: kind, Name: name, Path: loc.path, State: "deleted"}
	if m != modePull && m != modeSync || (old != nil && old.Deleted != "") {
		return rep, old
	}
	t, err := r.b.tombstone(ctx, kind, name)
	if err != nil || t == nil {
		rep.Err = err
		return rep, old
	}
	st := &sessionState{Path: loc.path, Size: loc.size, Mtime: loc.mtime, Deleted: t.Reason}
	if t.Reason != ReasonDelete {
		return rep, st
	}
	unchanged := old != nil && old.Pushed && old.Path == loc.path && old.Size == loc.size && old.Mtime == loc.mtime
	if !unchanged {
		rep.Err = fmt.Errorf("deleted on the remote (by %s at %s), but the local copy may hold lines that were never pushed: it is kept, and not pushed", t.Host, t.Time)
		return rep, st
	}
	if err := r.trashLocal(ctx, kind, loc.path); err != nil {
		rep.Err = err
		return rep, st
	}
	return rep, nil
}

// local is a session found in the store.
type local struct {
	path  string
	size  int64
	mtime int64
}

// fastPath answers for a session whose two sides are as the last run
// left them, without reading either.
func (r *Remote) fastPath(m mode, kind, name string, loc *local, h *head, old *sessionState) (SessionReport, bool) {
	rep := SessionReport{Kind: kind, Name: name}
	if loc != nil {
		rep.Path = loc.path
	}
	unchanged := !r.opts.Verify && old != nil && loc != nil && h != nil && old.Path == loc.path && old.Gen == h.gen && old.Size == loc.size && old.Mtime == loc.mtime
	pulled := unchanged && old.Q >= old.Segs
	pushed := unchanged && old.Pushed
	if (m == modePull && pulled) || (m == modePush && pushed) || (pulled && pushed) {
		rep.State = "in sync"
		return rep, true
	}
	if m != modeStatus {
		return rep, false
	}
	switch {
	case loc == nil:
		rep.State = "new remote"
	case h == nil:
		rep.State = "new local"
	case old == nil || old.Path != loc.path:
		rep.State = "compare"
	default:
		lc := old.Size != loc.size || old.Mtime != loc.mtime || !old.Pushed
		rc := old.Gen != h.gen || old.Q < old.Segs
		switch {
		case lc && rc:
			rep.State = "push+pull"
		case lc:
			rep.State = "push"
		default:
			rep.State = "pull"
		}
	}
	return rep, true
}

// session runs one session, retrying when another writer published a
// manifest generation first.
func (r *Remote) session(ctx context.Context, m mode, kind, name string, loc *local, h *head, old *sessionState) (SessionReport, *sessionState) {
	for try := 0; ; try++ {
		var rep SessionReport
		var st *sessionState
		var err error
		switch kind {
		case KindPi:
			rep, st, err = r.piSession(ctx, m, name, loc, h, old)
		case KindAgentUse:
			rep, st, err = r.auSession(ctx, m, name, loc, h, old)
		}
		if errors.Is(err, errRace) && try < 8 {
			// Read the newest manifest and go again.
			nh, herr := r.b.head(ctx, kind, name)
			if herr == nil {
				h = nh
				old = st
				continue
			}
			err = herr
		}
		rep.Kind, rep.Name = kind, name
		if loc != nil && rep.Path == "" {
			rep.Path = loc.path
		}
		// A session only one side has and the run could not move says
		// so in the words Status uses.
		switch {
		case err != nil:
			rep.State, rep.Err = "failed", err
		case m == modePull && loc != nil && (h == nil || rep.State == ""):
			rep.State = "new local"
		case m == modePush && loc == nil && h != nil:
			rep.State = "new remote"
		}
		return rep, st
	}
}
