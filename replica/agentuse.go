package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// conflictMark is in the name of the copy of a remote file a pull keeps
// beside a local file both sides changed (AgentUse reads *.json only).
const conflictMark = ".sync-conflict-"

// skipFile reports the files of a session directory that do not
// replicate: the lock and its owner record, temporary files, conflict
// copies.
func skipFile(name string) bool {
	return name == layout.AgentUseLockFile || strings.HasPrefix(name, layout.AgentUseLockFile+".") ||
		strings.HasSuffix(name, ".owner") || vfs.IsTempName(name) || strings.Contains(name, conflictMark)
}

// scanAgentUse finds AgentUse's <hash>/session/<dir>/ directories below
// root, a directory of project directories (<data>/agentuse/project),
// through the one AgentUse walk (agentuse.WalkDirs: a directory whose
// session.json is a special file is synced without it). A directory's
// size is the sum of its files' sizes and its mtime a hash of their
// names, sizes and mtimes: the fast path's fingerprint. What is not
// replicated is added to skipped: a directory that cannot be read (with
// what it holds; the rest of its session is), and symbolic links and
// special files, which are never followed or read. Sessions elsewhere
// below root than <hash>/session/<dir> are not sync's.
func (r *Remote) scanAgentUse(ctx context.Context, root string, out map[string]*local, warns, skipped *[]Warning) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("list %s: %w", root, err)
	}
	unit := "" // the session directory being synced: what is below it, auFiles reports
	for d, err := range agentuse.WalkDirs(ctx, r.opts.fs(), abs) {
		if d == nil {
			var pe *fs.PathError
			passed := errors.As(err, &pe) && (pe.Op == "read directory" ||
				(pe.Op == "open" && (filepath.Base(pe.Path) == layout.AgentUseSessionFile || filepath.Base(pe.Path) == layout.AgentUseSubagentDir)))
			if !passed {
				return err // reading root, or ctx
			}
			// A directory that cannot be read where sync's sessions
			// may be (<hash>, <hash>/session, <hash>/session/<dir>);
			// what is passed over inside a session synced, auFiles
			// reports, and nothing else below root is synced.
			rel, rerr := filepath.Rel(abs, pe.Path)
			inUnit := unit != "" && strings.HasPrefix(pe.Path, unit+string(filepath.Separator))
			if pe.Op == "read directory" && rerr == nil && strings.Count(rel, string(filepath.Separator)) < 3 && !inUnit {
				*skipped = append(*skipped, Warning{Key: pe.Path, Err: fmt.Errorf("directory could not be read: %w", pe.Err)})
			}
			continue
		}
		hash, rest, _ := strings.Cut(d.Rel, "/")
		sess, dirName, ok := strings.Cut(rest, "/")
		name := hash + "/" + dirName
		if d.Nested() || !ok || sess != "session" || strings.Contains(dirName, "/") || !validAgentUseName(name) {
			continue
		}
		unit = d.Path
		files, skip, err := r.auFiles(ctx, d.Path)
		if err != nil {
			*skipped = append(*skipped, Warning{Key: d.Path, Err: err})
			continue
		}
		*skipped = append(*skipped, skip...)
		size, print := agentuse.Fingerprint(files)
		out[KindAgentUse+"/"+name] = &local{path: d.Path, size: size, mtime: print}
	}
	return nil
}

// auFiles lists the files of a session directory that replicate
// (agentuse.DirFiles, subagents included), and what is passed over below
// it: directories that cannot be read, symbolic links (never followed: a
// message directory that is one is not synced) and named pipes or other
// special files. An error reading dir itself is returned.
func (r *Remote) auFiles(ctx context.Context, dir string) ([]agentuse.DirFile, []Warning, error) {
	files, skip, err := agentuse.DirFiles(ctx, r.opts.fs(), dir, true)
	if err != nil {
		return nil, nil, err
	}
	var skipped []Warning
	for _, err := range skip {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Op == "read directory" {
			skipped = append(skipped, Warning{Key: pe.Path, Err: fmt.Errorf("directory could not be read: %w", pe.Err)})
			continue
		}
		return nil, nil, err
	}
	out := files[:0]
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Rel))
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			skipped = append(skipped, Warning{Key: p, Err: errors.New("a symbolic link: not synced")})
		case !f.Mode.IsRegular():
			skipped = append(skipped, Warning{Key: p, Err: fmt.Errorf("not synced: %w", vfs.ErrNotRegular)})
		case !skipFile(path.Base(f.Rel)):
			out = append(out, f)
		}
	}
	return out, skipped, nil
}

// auSession brings one AgentUse session directory's two sides together.
// Files are whole objects: a pull writes the remote version of a file the
// local side did not change since the last sync, keeps the local version
// of a file both sides changed (the remote one is written beside it as
// <name>.sync-conflict-<sha8> and reported), and restores missing files;
// a push uploads the files that changed locally.
//
// Its steps are the methods of auReconcile, in order: readManifest,
// readLocal, pull, push, record and finish.
func (r *Remote) auSession(ctx context.Context, m mode, name string, loc *local, h *head, old *sessionState) (rep SessionReport, st *sessionState, err error) {
	s := &auReconcile{r: r, ctx: ctx, m: m, name: name, loc: loc, h: h, old: old}
	s.rep = SessionReport{Kind: KindAgentUse, Name: name}
	if err := s.readManifest(); err != nil {
		return s.rep, old, err
	}
	if err := s.readLocal(); err != nil {
		return s.rep, old, err
	}
	if err := s.pull(); err != nil {
		return s.rep, old, err
	}
	if err := s.push(); err != nil {
		return s.rep, old, err
	}
	s.record()
	return s.finish()
}

// auReconcile is one run of auSession: what its steps pass on to the
// next.
type auReconcile struct {
	r    *Remote
	ctx  context.Context
	m    mode
	name string
	loc  *local
	h    *head
	old  *sessionState

	rep     SessionReport
	st      *sessionState
	man     *Manifest
	nextGen int64

	dir       string
	base      map[string]string // base[p] is "<local sha256>|<remote object>" as of the last sync
	localSum  map[string]string
	localData map[string][]byte
	read      map[string]agentuse.DirFile // the files as listed before they were read
	written   map[string]bool             // the files the pull wrote
	remote    map[string]File
	newBase   map[string]string

	lost     error  // the manifest was sent and no reply seen
	lostSent []byte // its bytes
}

// readManifest reads the remote manifest h names, or an older valid
// generation when it is torn or foreign.
func (s *auReconcile) readManifest() error {
	r, ctx, m, h := s.r, s.ctx, s.m, s.h
	var err error
	s.nextGen = int64(1)
	if h != nil {
		s.nextGen = h.gen + 1
		if s.man, err = r.b.getManifest(ctx, h); err != nil {
			if errors.Is(err, errManifestTooLarge) && (m == modePush || m == modeSync) {
				return err // never replaced by a push: it may be whole
			}
			if s.man = r.olderManifest(ctx, h); s.man == nil {
				return err
			}
		}
	}
	return nil
}

// readLocal reads the local files of the session directory, and the
// remote files the manifest lists.
func (s *auReconcile) readLocal() error {
	r, name, loc, old, man := s.r, s.name, s.loc, s.old, s.man
	hash, dirName, _ := strings.Cut(name, "/")
	dir := filepath.Join(firstRoot(r.opts.projectRoots(), layout.AgentUseProjectsDir("")), hash, "session", dirName)
	if loc != nil {
		dir = loc.path
	}
	s.dir = dir
	base := map[string]string{}
	if old != nil && old.Path == dir {
		base = old.Files
	}
	s.base = base
	fsys := r.opts.fs()
	localSum := map[string]string{}
	localData := map[string][]byte{}
	read := map[string]agentuse.DirFile{} // the files as listed before they were read
	s.localSum, s.localData, s.read = localSum, localData, read
	s.written = map[string]bool{} // the files the pull wrote
	if loc != nil {
		files, _, err := r.auFiles(s.ctx, dir) // what is skipped was reported by the scan
		if err != nil {
			return err
		}
		for _, f := range files {
			read[f.Rel] = f
			data, err := readMember(fsys, filepath.Join(dir, filepath.FromSlash(f.Rel)))
			if err != nil {
				return err
			}
			localSum[f.Rel], localData[f.Rel] = sha(data), data
		}
	}
	remote := map[string]File{}
	if man != nil {
		for _, f := range man.Files {
			remote[f.Path] = f
		}
	}
	s.remote = remote
	newBase := map[string]string{}
	for k, v := range base {
		newBase[k] = v
	}
	s.newBase = newBase
	return nil
}

// readMember reads one file of a session directory as listed: a member
// swapped for a symbolic link since the listing is refused (ELOOP), not
// followed, so that a push never uploads what the link points at.
func readMember(fsys vfs.FS, p string) ([]byte, error) {
	f, err := fsys.OpenFile(p, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return data, err
}

// baseLocal is the local sha256 of file p as of the last sync.
func (s *auReconcile) baseLocal(p string) string { l, _, _ := strings.Cut(s.base[p], "|"); return l }

// baseObj is the remote object of file p as of the last sync.
func (s *auReconcile) baseObj(p string) string { _, o, _ := strings.Cut(s.base[p], "|"); return o }

// same reports whether the local file of sha256 ls is the remote file f.
func (s *auReconcile) same(ls string, f File) bool {
	r := s.r
	return (len(r.opts.Recipients) == 0 && r.opts.Transform == nil && ls == f.SHA256) || (ls == s.baseLocal(f.Path) && f.SHA256 == s.baseObj(f.Path))
}

// pull writes the remote files the local side did not change, a conflict
// copy beside a file both sides changed, and the missing files.
func (s *auReconcile) pull() error {
	r, ctx, m, man, loc, dir := s.r, s.ctx, s.m, s.man, s.loc, s.dir
	localSum, localData, newBase, written, rep := s.localSum, s.localData, s.newBase, s.written, &s.rep
	if (m == modePull || m == modeSync) && man != nil {
		write := map[string][]byte{}
		for _, f := range man.Files {
			ls, have := localSum[f.Path]
			switch {
			case have && s.same(ls, f):
				newBase[f.Path] = ls + "|" + f.SHA256
				continue
			case have && f.SHA256 == s.baseObj(f.Path):
				continue // only the local side changed: the push uploads it
			}
			plain, err := r.b.getData(ctx, f.Object, f.SHA256, f.Size, f.Plain)
			if err != nil {
				return err
			}
			if have && ls != s.baseLocal(f.Path) && sha(plain) != ls {
				// Both changed: keep the local file, the remote one beside it.
				cp := f.Path + conflictMark + sha(plain)[:8]
				write[cp] = plain
				rep.Conflicts = append(rep.Conflicts, Conflict{ID: f.Path, Copies: []string{cp}})
				continue
			}
			write[f.Path] = plain
			localSum[f.Path], localData[f.Path] = sha(plain), plain
			newBase[f.Path] = sha(plain) + "|" + f.SHA256
		}
		if len(write) > 0 {
			store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Dir(dir), Command: "sessctl sync", LockMode: "sync", FS: r.opts.FS})
			if err != nil {
				return err
			}
			for p := range write {
				written[p] = true
			}
			err = store.WriteFiles(ctx, dir, write)
			if cerr := store.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			rep.Pulled = len(write)
			rep.Created = loc == nil
		}
	}
	return nil
}

// push uploads the files that changed locally and publishes the next
// generation; a publish whose reply was lost is kept for finish.
func (s *auReconcile) push() error {
	r, ctx, m, name, h, nextGen := s.r, s.ctx, s.m, s.name, s.h, s.nextGen
	remote, localSum, localData, newBase, rep := s.remote, s.localSum, s.localData, s.newBase, &s.rep
	var err error
	if (m == modePush || m == modeSync) && len(localSum) > 0 {
		nm := &Manifest{Format: FormatVersion, Kind: KindAgentUse, Name: name, Gen: nextGen, Host: r.opts.Host,
			Time: r.opts.now().UTC().Format(time.RFC3339), Encrypted: len(r.opts.Recipients) > 0}
		paths := map[string]bool{}
		for p := range remote {
			paths[p] = true
		}
		for p := range localSum {
			paths[p] = true
		}
		sorted := make([]string, 0, len(paths))
		for p := range paths {
			sorted = append(sorted, p)
		}
		sort.Strings(sorted)
		changed := 0
		for _, p := range sorted {
			f, inRemote := remote[p]
			ls, inLocal := localSum[p]
			if inLocal && (!inRemote || (!s.same(ls, f) && ls != s.baseLocal(p))) {
				data := localData[p]
				if r.opts.Transform != nil && strings.HasSuffix(p, ".json") {
					if data, err = r.opts.Transform(data); err != nil {
						return fmt.Errorf("push %s: transform: %w", p, err)
					}
				}
				seg, err := r.b.putData(ctx, data)
				if err != nil {
					return err
				}
				f = File{Path: p, Object: seg.Object, SHA256: seg.SHA256, Size: seg.Size, Plain: seg.Plain}
				changed++
				newBase[p] = ls + "|" + seg.SHA256
			}
			nm.Files = append(nm.Files, f)
			nm.Size += f.Plain
		}
		if changed > 0 {
			sent, err := r.b.publish(ctx, nm)
			switch {
			case err != nil && (sent == nil || errors.Is(err, errRace)):
				return err
			case err != nil:
				// The manifest may have arrived: remember the state this
				// push would have left, for the next run to check (settle).
				s.lost, s.lostSent = err, sent
			case h != nil:
				for _, k := range append([]string{h.key}, h.older...) {
					_ = r.b.remove(ctx, k)
				}
			}
			s.man = nm
			rep.Pushed = changed
		}
	}
	return nil
}

// record makes the state to remember: the files as synced, and the
// directory as it is now.
func (s *auReconcile) record() {
	r, m, loc, old, h, man, dir := s.r, s.m, s.loc, s.old, s.h, s.man, s.dir
	read, written, rep := s.read, s.written, &s.rep
	st := &sessionState{Path: dir, Files: s.newBase}
	s.st = st
	if man != nil {
		st.Gen = man.Gen
	}
	// Record the directory as it is now, for the fast path; it counts as
	// pushed only when it holds what this run read and wrote, not a file
	// the agent wrote meanwhile.
	stable := false
	if files, _, err := r.auFiles(s.ctx, dir); err == nil {
		stable = true
		listed := map[string]bool{}
		for _, f := range files {
			listed[f.Rel] = true
			if rf, ok := read[f.Rel]; !written[f.Rel] && (!ok || rf != f) {
				stable = false // the agent wrote it meanwhile
			}
		}
		st.Size, st.Mtime = agentuse.Fingerprint(files)
		rep.Path = dir
		for p := range read {
			if !written[p] && !listed[p] {
				stable = false // removed meanwhile
			}
		}
	}
	st.Pushed = stable && (m == modePush || m == modeSync || s.holdsRemote() || (old != nil && old.Pushed && loc != nil && old.Size == loc.size && old.Mtime == loc.mtime))
	if m == modePush && h != nil && (old == nil || old.Gen != h.gen || old.Q < old.Segs) {
		st.Q, st.Segs = 0, 1 // remote changes may not be pulled yet
	}
}

// holdsRemote reports whether the directory holds exactly the files of
// the remote's manifest, as read or written by this run: a session a
// pull made or brought up to date has nothing of its own to push.
func (s *auReconcile) holdsRemote() bool {
	if s.man == nil || len(s.man.Files) != len(s.localSum) {
		return false
	}
	for _, f := range s.man.Files {
		ls, ok := s.localSum[f.Path]
		if !ok || s.newBase[f.Path] != ls+"|"+f.SHA256 {
			return false
		}
	}
	return true
}

// finish returns the report and the state; after a publish whose reply
// was lost, the old state with the new one pending, and that error.
func (s *auReconcile) finish() (SessionReport, *sessionState, error) {
	old, st, rep := s.old, s.st, &s.rep
	if s.lost != nil {
		c := &sessionState{}
		if old != nil {
			cc := *old
			c = &cc
		}
		c.pending(s.lostSent, *st)
		rep.Pushed = 0
		return *rep, c, s.lost
	}
	switch {
	case rep.Pushed > 0 && rep.Pulled > 0:
		rep.State = "pushed+pulled"
	case rep.Pushed > 0:
		rep.State = "pushed"
	case rep.Pulled > 0:
		rep.State = "pulled"
	default:
		rep.State = "in sync"
	}
	return *rep, st, nil
}
