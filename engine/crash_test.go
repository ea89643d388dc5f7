package engine_test

// Crash workloads: randomized sessions (messages, branches, summaries,
// compactions, labels, branched sessions, forks, reopenings, migrations of
// version 1 and 2 files) run on a vfstest.CrashFS behind a vfstest.FaultFS.
// Each cycle picks a random filesystem operation and takes a simulated
// power cut just before it (vfstest.CrashFS.CrashClone, which drops or
// tears what was not synced); some cycles also inject a write, sync,
// rename, create, link or directory sync error. After the crash the
// machine "reboots": every session file is checked and reopened for
// writing, and the next cycle goes on from there.
//
// Invariants checked after every crash:
//   - every entry acknowledged under SyncEach is present, byte for byte,
//     in order (acknowledged: its append returned nil once the session
//     had a file; before that pi's rule keeps new sessions in memory);
//   - at most a torn last line remains; a write-mode open quarantines it
//     and cuts it off (Recovery reports it), or adds the missing newline;
//   - every *.jsonl file has a valid header, and opening it for writing
//     succeeds;
//   - ids are unique and every parent exists;
//   - a file migrated from version 1 or 2 holds the original bytes or the
//     complete migrated file (plus later appends), never a mix.
//
// After an injected write or sync error, the session must refuse every
// further write with the same error, and a reopen must recover.
//
// `make test` runs a short deterministic set. `make crash` builds with
// the crash tag and runs for -crash.time (default 2m) from a time-based
// seed; failures print the seed of the failing workload, which reproduces
// it: go test -tags crash -run TestCrashWorkloads ./engine/
// -crash.seed=N -crash.workloads=1 -v

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
	"github.com/sessctl/sessctl/migrate"
)

const (
	crashRoot  = "/crash"
	crashCwd   = "/work/project"
	sessionDir = crashRoot + "/sessions/--work-project--"
	legacyDir  = crashRoot + "/legacy"
)

// crashStats are the counts a run reports.
type crashStats struct {
	workloads, cycles, crashes, midOp   int
	faults, stickyChecked, faultReopens int
	ackedChecked, lost                  int
	tornRepaired, newlineAdded          int
	migrations, migrationOrig           int
	filesChecked, ops                   int
}

func TestCrashWorkloads(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("not ported to Windows yet: the workloads' bookkeeping reports more entries on disk than acknowledged there (make crash runs on Linux)")
	}
	plan := testenv.CrashPlan(t, 8, 30, 1)
	var st crashStats
	for i := 0; plan.More(i); i++ {
		w := newWorkload(t, plan.Seed+uint64(i), &st)
		w.trace = plan.Trace
		w.run()
		st.workloads++
		if t.Failed() {
			t.Fatalf("workload with seed %d failed; rerun it with -crash.seed=%d -crash.workloads=1", w.seed, w.seed)
		}
	}
	t.Logf("workloads %d, cycles %d, crashes injected %d (%d inside an operation), faults injected %d "+
		"(sticky errors checked %d, reopens after a fault %d), filesystem operations %d",
		st.workloads, st.cycles, st.crashes, st.midOp, st.faults, st.stickyChecked, st.faultReopens, st.ops)
	t.Logf("acknowledged entries checked %d, lost %d; files checked %d; torn tails repaired %d, newlines added %d; "+
		"migrations %d (original kept by a crash %d)",
		st.ackedChecked, st.lost, st.filesChecked, st.tornRepaired, st.newlineAdded, st.migrations, st.migrationOrig)
	if st.lost != 0 {
		t.Errorf("%d acknowledged entries lost", st.lost)
	}
	if st.crashes == 0 || st.ackedChecked == 0 {
		t.Errorf("the run checked nothing: %d crashes, %d acknowledged entries", st.crashes, st.ackedChecked)
	}
}

// workload is one randomized run: several crash cycles on one machine.
type workload struct {
	t     *testing.T
	seed  uint64
	trace bool       // log every operation (-crash.trace)
	rng   *rand.Rand // the workload's choices
	crng  *rand.Rand // the crash's choices
	st    *crashStats
	clock time.Time

	disk *vfstest.CrashFS // the machine's disk
	ffs  *vfstest.FaultFS // what the engine sees

	// Set by the hook.
	opsLeft  int // mutating operations until the power cut
	dead     bool
	snapshot *vfstest.CrashFS
	ackedAt  map[string][]string
	failedAt map[string]int

	s      *engine.Session
	file   string              // s's file
	acked  map[string][]string // session file -> lines acknowledged durable, in file order
	failed map[string]int      // session file -> failed writes since its last acknowledgement
	legacy map[string]legacyFile
	faulty bool // a fault is armed or has fired in this cycle
}

// legacyFile is a version 1 or 2 file the workload wrote for migration.
type legacyFile struct {
	orig, migrated []byte
}

func newWorkload(t *testing.T, seed uint64, st *crashStats) *workload {
	w := &workload{
		t: t, seed: seed, st: st,
		rng:    rand.New(rand.NewPCG(seed, 0x5e55c71)),
		crng:   rand.New(rand.NewPCG(seed, 0xc4a54)),
		clock:  time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		disk:   vfstest.NewCrashFS(),
		acked:  make(map[string][]string),
		failed: make(map[string]int),
		legacy: make(map[string]legacyFile),
	}
	if err := w.disk.MkdirAll(crashRoot, vfs.DirMode); err != nil {
		t.Fatal(err)
	}
	if err := w.disk.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *workload) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d: "+format, append([]any{w.seed}, args...)...)
}

func (w *workload) errorf(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf("seed %d: "+format, append([]any{w.seed}, args...)...)
}

// store opens the workload's store on fsys (w.ffs when nil).
func (w *workload) store(fsys vfs.FS) *engine.Store {
	o := w.opts()
	if fsys != nil {
		o.FS = fsys
	}
	st, err := engine.OpenStore(context.Background(), o)
	if err != nil {
		w.fatalf("open store: %v", err)
	}
	return st
}

func (w *workload) opts() engine.StoreOptions {
	// The lock package works on real paths, not on the FS seam: no lock.
	return engine.WithoutLock(engine.StoreOptions{
		FS:   w.ffs,
		Dir:  sessionDir,
		Sync: engine.SyncEach,
		Now: func() time.Time {
			w.clock = w.clock.Add(time.Duration(1+w.rng.IntN(1500)) * time.Millisecond)
			return w.clock
		},
		NewSessionID: func() string { return fakeUUID(w.rng) },
		NewEntryID: func() string {
			if w.rng.IntN(20) == 0 {
				return fmt.Sprintf("%08x", w.rng.IntN(4)) // collisions, which the engine skips
			}
			return fmt.Sprintf("%08x", w.rng.Uint32())
		},
	})
}

func fakeUUID(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>52&0xfff, b&0xffffffffffff)
}

func (w *workload) run() {
	cycles := 2 + w.rng.IntN(4)
	for c := 0; c < cycles; c++ {
		w.cycle()
		w.st.cycles++
	}
	if w.s != nil {
		_ = w.s.Close()
	}
}

// cycle runs operations until the power cut, then reboots and checks.
func (w *workload) cycle() {
	w.tracef("cycle %d", w.st.cycles)
	w.ffs = vfstest.NewFaultFS(w.disk)
	w.dead, w.snapshot, w.faulty = false, nil, false
	steps := 5 + w.rng.IntN(40)
	w.opsLeft = 1 + w.rng.IntN(steps*4)
	w.ffs.SetHook(w.hook)
	if w.rng.IntN(3) == 0 {
		w.armFault()
	}
	if w.s == nil {
		w.start()
	}
	for step := 0; step < steps && !w.dead; step++ {
		w.step()
	}
	if !w.dead {
		w.cut() // the power goes at the end of the cycle
	} else {
		w.st.midOp++
	}
	w.st.crashes++
	if w.s != nil {
		_ = w.s.Close() // the process is gone; its handles die with it
		w.s = nil
	}
	w.reboot()
}

func (w *workload) tracef(format string, args ...any) {
	if w.trace {
		w.t.Logf(format, args...)
	}
}

func (w *workload) hook(op vfstest.Op, path string) error {
	if w.dead {
		return testenv.ErrPowerCut
	}
	w.tracef("    fs %s %s", op, path)
	w.st.ops++
	if !op.Mutates() {
		return nil
	}
	w.opsLeft--
	if w.opsLeft <= 0 {
		w.tracef("    power cut before %s %s", op, path)
		w.cut()
		return testenv.ErrPowerCut
	}
	return nil
}

// cut takes the power-cut image of the disk and the acknowledged state.
func (w *workload) cut() {
	w.snapshot = w.disk.CrashClone(w.crng)
	w.ackedAt = make(map[string][]string, len(w.acked))
	for f, lines := range w.acked {
		w.ackedAt[f] = slices.Clone(lines)
	}
	w.failedAt = maps.Clone(w.failed)
	w.dead = true
}

func (w *workload) armFault() {
	ops := []vfstest.Op{vfstest.OpWrite, vfstest.OpSync, vfstest.OpRename, vfstest.OpCreate, vfstest.OpLink, vfstest.OpSyncDir, vfstest.OpTruncate}
	ft := vfstest.Fault{Op: ops[w.rng.IntN(len(ops))], N: 1 + w.rng.IntN(12)}
	if w.rng.IntN(2) == 0 {
		ft.Err = syscall.ENOSPC
		if ft.Op == vfstest.OpWrite {
			ft.Written = -1
		}
	}
	w.ffs.Inject(ft)
	w.faulty = true
}

// start opens the session the cycle works on: a new one, a legacy file
// to migrate, or an existing session file.
func (w *workload) start() {
	files := w.sessionFiles(w.ffs)
	switch r := w.rng.IntN(10); {
	case r < 3 || len(files) == 0 && r < 6:
		w.tracef("create")
		s, err := w.store(nil).Create(context.Background(), crashCwd, engine.CreateOptions{})
		if !w.handle("create", err) {
			return
		}
		w.setSession(s)
		if w.rng.IntN(3) == 0 {
			w.flush()
		}
	case r < 6:
		w.writeLegacy()
	default:
		if len(files) == 0 {
			return
		}
		w.open(files[w.rng.IntN(len(files))])
	}
}

func (w *workload) setSession(s *engine.Session) {
	w.s = s
	w.file = s.SessionFile()
}

// open opens path for writing and records what a migration or repair
// made durable.
func (w *workload) open(path string) {
	w.tracef("open %s", filepath.Base(path))
	pre, _ := w.disk.ReadFile(path) // as it is before the open, read past the hook
	// pi's open: a file never written (a new session closed before its
	// first user or assistant message) is a new session again.
	s, err := w.store(nil).Open(context.Background(), path, engine.OpenOptions{Create: true})
	if !w.handle("open "+path, err) {
		return
	}
	// The open changes nothing. Half the time the first write makes the
	// repairs, half the time Flush does at once, so that they can be
	// checked here; when that fails the session is dropped, as a failed
	// open was.
	if w.rng.IntN(2) == 0 {
		w.setSession(s)
		return
	}
	if err := s.Flush(); !w.handle("flush "+path, err) {
		_ = s.Close()
		return
	}
	w.setSession(s)
	rec := s.Recovery()
	if rec.Migrated {
		w.st.migrations++
	} else if pre != nil {
		w.checkRecovery(w.disk, path, pre, rec)
	}
	if rec.Migrated || rec.TornBytes > 0 || rec.NewlineAdded {
		w.ackNow() // these rewrite and sync the file
	}
}

// checkRecovery checks what a write-mode open of a version 3 file that
// held pre reported and left: a torn tail quarantined byte for byte and
// cut off, a missing final newline added, a clean tail in the end.
func (w *workload) checkRecovery(fsys vfs.FS, file string, pre []byte, rec engine.Recovery) {
	w.t.Helper()
	p := jsonl.ParseFile(pre)
	switch p.Tail {
	case jsonl.TailTorn:
		w.st.tornRepaired++
		frag := pre[p.TailOffset:]
		if rec.TornBytes != len(frag) {
			w.errorf("%s: torn tail of %d bytes, Recovery reports %d", file, len(frag), rec.TornBytes)
		}
		if q, err := fsys.ReadFile(rec.Quarantine); err != nil || !bytes.Equal(q, frag) {
			w.errorf("%s: quarantine %q holds %q (%v), want the torn tail %q", file, rec.Quarantine, q, err, frag)
		}
	case jsonl.TailNoNewline:
		w.st.newlineAdded++
		if !rec.NewlineAdded {
			w.errorf("%s: last line without newline, Recovery reports none added", file)
		}
	case jsonl.TailClean:
		if rec.TornBytes != 0 || rec.NewlineAdded {
			w.errorf("%s: clean file, but Recovery reports %+v", file, rec)
		}
	}
	if after, err := fsys.ReadFile(file); err != nil {
		w.errorf("read %s after reopening: %v", file, err)
	} else if tail := jsonl.ParseFile(after).Tail; tail != jsonl.TailClean {
		w.errorf("%s: tail %d after a write-mode open, want clean", file, tail)
	}
}

// writeLegacy writes a version 1 or 2 session durably and opens it.
func (w *workload) writeLegacy() {
	id := fakeUUID(w.rng)
	v := 1 + w.rng.IntN(2)
	data := legacySession(w.rng, id, v, w.clock)
	path := filepath.Join(legacyDir, fmt.Sprintf("legacy-v%d-%s.jsonl", v, id[:8]))
	if err := vfs.WriteFileAtomic(w.disk, path, data, vfs.FileMode); err != nil {
		w.fatalf("write legacy file: %v", err)
	}
	var out bytes.Buffer
	if _, err := migrate.Stream(context.Background(), bytes.NewReader(data), &out); err != nil {
		w.fatalf("migrate legacy file in memory: %v", err)
	}
	w.legacy[path] = legacyFile{orig: data, migrated: out.Bytes()}
	w.open(path)
}

// handle deals with an error of an operation that is not a session write:
// nil is fine, a crash ends the cycle, an injected fault is survivable.
// It reports whether err was nil.
func (w *workload) handle(what string, err error) bool {
	w.t.Helper()
	switch {
	case err == nil:
		return true
	case w.dead:
		return false
	case w.faulty && isInjected(err):
		w.st.faults++
		w.ffs.Clear()
		w.faulty = false
		return false
	}
	w.fatalf("%s: unexpected error: %v", what, err)
	return false
}

func isInjected(err error) bool {
	return errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENOSPC)
}

// writeOp runs an operation that writes to the session. On success the
// session's entries become the acknowledged state of its file (once the
// file exists: before, pi keeps them in memory). On an injected fault,
// the session must refuse every later write with the same error; it is
// then closed and reopened, which must recover.
func (w *workload) writeOp(what string, do func() error) {
	w.t.Helper()
	w.writeOpAck(what, do, true)
}

// writeOpAck is writeOp; ack false leaves the acknowledged state as it
// is when the operation succeeds.
func (w *workload) writeOpAck(what string, do func() error, ack bool) {
	w.t.Helper()
	if w.s == nil {
		return
	}
	w.tracef("%s on %s", what, filepath.Base(w.file))
	before := len(w.s.Entries())
	err := do()
	w.tracef("  -> %v", err)
	switch {
	case err == nil:
		if ack {
			w.ackNow()
		}
		return
	case w.dead:
		return
	case !(w.faulty && isInjected(err)):
		w.fatalf("%s: unexpected error: %v", what, err)
	}
	w.st.faults++
	w.ffs.Clear()
	w.faulty = false
	w.failed[w.file]++
	// (A failed createBranchedSession has already switched to the new
	// session's entries, as pi does.)
	if got := len(w.s.Entries()); got != before && what != "create branched session" {
		w.errorf("%s failed (%v) but the session indexed %d new entries", what, err, got-before)
	}
	for _, again := range []func() error{
		func() error { _, err := w.s.AppendMessage(raw(userMessage(w.rng, w.clock))); return err },
		func() error { _, err := w.s.AppendModelChange("openai", "gpt-4o"); return err },
	} {
		if err2 := again(); !errors.Is(err2, err) {
			w.errorf("after %s failed with %q, a later write returned %v, want the same error", what, err, err2)
		}
	}
	w.st.stickyChecked++
	file := w.file
	_ = w.s.Close()
	w.s = nil
	w.st.faultReopens++
	w.verifyFile(w.disk, file, w.acked[file], w.failed[file], false)
	if _, err := w.disk.Stat(file); err == nil {
		w.open(file)
	}
}

// flush writes a new session's file, which acknowledges its entries, or
// makes the repairs an open left to the first write. Those sync what they
// write but not the lines already in the file (an earlier session's last
// append may have failed to sync), so they acknowledge nothing new.
func (w *workload) flush() {
	_, err := w.disk.Stat(w.file)
	w.writeOpAck("flush", func() error { return w.s.Flush() }, err != nil)
}

// ackNow records the session's entries as durable when its file exists.
// Call it only after an operation that synced the whole file: an append
// under SyncEach, or the atomic write of a new file.
func (w *workload) ackNow() {
	if w.s == nil || w.dead {
		return
	}
	if _, err := w.disk.Stat(w.file); err != nil {
		return
	}
	var lines []string
	for _, e := range w.s.Entries() {
		lines = append(lines, string(e.Raw))
	}
	w.acked[w.file] = lines
	delete(w.failed, w.file)
}

// step runs one random operation on the current session.
func (w *workload) step() {
	if w.s == nil {
		w.start()
		return
	}
	s := w.s
	r := w.rng
	ids := w.ids()
	switch k := r.IntN(100); {
	case k < 14:
		w.writeOp("append user message", func() error { _, err := s.AppendMessage(raw(userMessage(r, w.clock))); return err })
	case k < 30:
		w.writeOp("append assistant message", func() error { _, err := s.AppendMessage(raw(assistantMessage(r, w.clock))); return err })
	case k < 40:
		w.writeOp("append tool result", func() error { _, err := s.AppendMessage(raw(toolResult(r, w.clock))); return err })
	case k < 43:
		w.writeOp("thinking level", func() error {
			_, err := s.AppendThinkingLevelChange([]string{"off", "low", "medium", "high"}[r.IntN(4)])
			return err
		})
	case k < 46:
		w.writeOp("model change", func() error { _, err := s.AppendModelChange("anthropic", "claude-sonnet-4-5"); return err })
	case k < 50 && len(ids) > 0:
		target := ids[r.IntN(len(ids))]
		label := "" // clears
		if r.IntN(4) > 0 {
			label = testenv.RandomText(r, 1, 3)
		}
		w.writeOp("label", func() error { _, err := s.AppendLabelChange(target, label); return err })
	case k < 52:
		w.writeOp("session info", func() error { _, err := s.AppendSessionInfo(" " + testenv.RandomText(r, 1, 4) + " "); return err })
	case k < 54:
		w.writeOp("custom entry", func() error {
			_, err := s.AppendCustomEntry("crash-test", json.RawMessage(fmt.Sprintf(`{"n":%d,"note":%s}`, r.IntN(1000), jsonl.AppendString(nil, testenv.RandomText(r, 1, 8)))))
			return err
		})
	case k < 56:
		w.writeOp("custom message", func() error {
			_, err := s.AppendCustomMessageEntry("crash-note", testenv.RandomText(r, 3, 20), r.IntN(2) == 0, nil)
			return err
		})
	case k < 64 && len(ids) > 0:
		if err := s.Branch(ids[r.IntN(len(ids))]); err != nil {
			w.fatalf("branch: %v", err)
		}
	case k < 65:
		s.ResetLeaf()
	case k < 70:
		from := "" // the root
		if len(ids) > 0 && r.IntN(5) > 0 {
			from = ids[r.IntN(len(ids))]
		}
		w.writeOp("branch with summary", func() error {
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: from, Summary: "Summary: " + testenv.RandomText(r, 5, 30)})
			return err
		})
	case k < 76:
		path := s.BranchPath("")
		kept := ""
		if len(path) > 0 {
			kept = path[r.IntN(len(path))].ID
		}
		w.writeOp("compaction", func() error {
			_, err := s.AppendCompaction(engine.Compaction{Summary: "Compacted: " + testenv.RandomText(r, 10, 60), FirstKeptEntryID: kept, TokensBefore: float64(1000 + r.IntN(100000))})
			return err
		})
	case k < 80 && len(ids) > 0:
		leaf := ids[r.IntN(len(ids))]
		w.writeOp("create branched session", func() error {
			_, err := s.CreateBranchedSession(context.Background(), leaf)
			w.file = s.SessionFile()
			return err
		})
	case k < 84:
		if _, err := w.disk.Stat(w.file); err != nil {
			return // nothing on disk to fork yet
		}
		w.tracef("fork %s", filepath.Base(w.file))
		f, err := w.store(nil).Fork(context.Background(), w.file, engine.ForkOptions{Cwd: crashCwd, Dir: sessionDir})
		if !w.handle("fork", err) {
			return
		}
		_ = s.Close()
		w.setSession(f)
		w.ackNow()
	case k < 90:
		w.tracef("close and reopen")
		file := w.file
		if err := s.Close(); err != nil && !w.dead {
			w.fatalf("close: %v", err)
		}
		w.s = nil
		w.open(file)
	case k < 92:
		w.flush()
	case k < 94:
		w.tracef("new session")
		if _, err := s.NewSession(context.Background(), engine.NewSessionOptions{}); !w.handle("new session", err) {
			return
		}
		w.file = s.SessionFile()
	case k < 96:
		w.writeLegacyAndSwitch()
	default:
		w.writeOp("append big tool result", func() error {
			_, err := s.AppendMessage(raw(bigToolResult(r, w.clock)))
			return err
		})
	}
}

func (w *workload) writeLegacyAndSwitch() {
	if w.s != nil {
		_ = w.s.Close()
		w.s = nil
	}
	w.writeLegacy()
}

// ids returns the ids of the session's entries.
func (w *workload) ids() []string {
	var ids []string
	for _, e := range w.s.Entries() {
		if e.IDKind == jsonl.KindString {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// sessionFiles lists every *.jsonl file under the crash root.
func (w *workload) sessionFiles(fsys vfs.FS) []string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !w.dead {
				w.fatalf("read dir %s: %v", dir, err)
			}
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				walk(p)
			case layout.IsSessionFileName(e.Name()):
				out = append(out, p)
			}
		}
	}
	walk(crashRoot)
	return out
}

// reboot replaces the disk with the crash image and checks every session
// file on it: acknowledged entries, header, repair, tree, migration.
func (w *workload) reboot() {
	w.disk = w.snapshot
	w.ffs = vfstest.NewFaultFS(w.disk)
	for file := range w.ackedAt {
		if _, err := w.disk.Stat(file); err != nil {
			w.st.lost += len(w.ackedAt[file])
			w.st.ackedChecked += len(w.ackedAt[file])
			w.errorf("session file %s with %d acknowledged entries is gone after the crash: %v", file, len(w.ackedAt[file]), err)
		}
	}
	acked := make(map[string][]string)
	for _, file := range w.sessionFiles(w.disk) {
		// Half the files are repaired now; the others are left to the
		// next cycle, whose open may itself be cut short.
		if lines := w.verifyFile(w.disk, file, w.ackedAt[file], w.failedAt[file], w.rng.IntN(2) == 0); lines != nil {
			acked[file] = lines
		}
		if _, ok := w.legacy[file]; ok && w.ackedAt[file] == nil {
			if data, err := w.disk.ReadFile(file); err == nil && bytes.Equal(data, w.legacy[file].orig) {
				w.st.migrationOrig++
			}
		}
	}
	w.acked = acked
	w.failed = make(map[string]int)
}

// verifyFile checks one session file: a valid header, no damage but a
// torn tail, a legacy file whole in one version or the other, and, read
// without writing, every acknowledged entry in order and a valid tree.
// With repair it then opens the file for writing and checks the repair.
// It returns the file's entries, which after a crash are all durable.
func (w *workload) verifyFile(fsys vfs.FS, file string, want []string, failed int, repair bool) []string {
	w.t.Helper()
	w.st.filesChecked++
	w.st.ackedChecked += len(want)
	data, err := fsys.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && len(want) == 0 {
			return nil
		}
		w.st.lost += len(want)
		w.errorf("read %s: %v", file, err)
		return nil
	}
	p := jsonl.ParseFile(data)
	if len(p.Entries) == 0 || !p.Entries[0].IsHeader() || p.Entries[0].IDKind != jsonl.KindString || p.Entries[0].Line != 1 {
		w.errorf("%s has no valid header (%d bytes): %.200q", file, len(data), data)
		return nil
	}
	if len(p.Malformed) > 0 {
		w.errorf("%s has malformed lines in the middle: %+v", file, p.Malformed)
	}
	if lf, ok := w.legacy[file]; ok && !bytes.Equal(data, lf.orig) && !bytes.HasPrefix(data, lf.migrated) {
		w.errorf("%s holds neither the original legacy file nor the migrated one:\n%s", file, data)
	}
	r, err := w.store(fsys).Open(context.Background(), file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		w.errorf("open %s read-only: %v", file, err)
		return nil
	}
	got := r.Entries()
	_ = r.Close()
	// Acknowledged entries: all there, unchanged, in order.
	present := make(map[string]int, len(got))
	for _, e := range got {
		present[string(e.Raw)]++
	}
	for i, line := range want {
		if present[line] == 0 {
			w.st.lost++
			w.errorf("%s: acknowledged entry %d of %d lost: %.160s", file, i+1, len(want), line)
			continue
		}
		present[line]--
		if i < len(got) && string(got[i].Raw) != line {
			w.errorf("%s: entry %d is %.120s, want acknowledged %.120s", file, i+1, got[i].Raw, line)
		}
	}
	if extra := len(got) - len(want); len(want) > 0 && extra > 1+failed {
		// Only the write in flight and writes that failed can add lines
		// beyond those acknowledged.
		w.errorf("%s: %d entries beyond the %d acknowledged (%d failed writes)", file, extra, len(want), failed)
	}
	// The tree: unique ids, parents that exist.
	seen := make(map[string]bool, len(got))
	for _, e := range got {
		if e.IDKind != jsonl.KindString {
			w.errorf("%s line %d: entry without a string id", file, e.Line)
			continue
		}
		if seen[e.ID] {
			w.errorf("%s line %d: duplicate id %s", file, e.Line, e.ID)
		}
		seen[e.ID] = true
	}
	for _, e := range got {
		if e.ParentKind == jsonl.KindString && !seen[e.ParentID] {
			w.errorf("%s line %d: parent %s of %s does not exist\n%s", file, e.Line, e.ParentID, e.ID, data)
		} else if e.ParentKind != jsonl.KindString && e.ParentKind != jsonl.KindNull {
			w.errorf("%s line %d: parentId is neither a string nor null", file, e.Line)
		}
	}
	if repair {
		s, err := w.store(fsys).Open(context.Background(), file, engine.OpenOptions{})
		if err != nil {
			w.errorf("reopen %s for writing: %v", file, err)
			return nil
		}
		if err := s.Flush(); err != nil {
			w.errorf("repair %s: %v", file, err)
			_ = s.Close()
			return nil
		}
		if !s.Recovery().Migrated {
			w.checkRecovery(fsys, file, data, s.Recovery())
		} else {
			w.st.migrations++
		}
		_ = s.Close()
	}
	lines := make([]string, len(got))
	for i, e := range got {
		lines[i] = string(e.Raw)
	}
	return lines
}

// ---- realistic content ----

func ms(t time.Time) float64 { return float64(t.UnixMilli()) }

func textBlock(s string) []byte {
	return jsonl.NewObject(len(s)+32).String("type", "text").String("text", s).Bytes()
}

func array(items ...[]byte) []byte {
	out := []byte{'['}
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}

func userMessage(r *rand.Rand, now time.Time) json.RawMessage {
	var content []byte
	if r.IntN(3) == 0 {
		content = jsonl.AppendString(nil, testenv.RandomText(r, 3, 40))
	} else {
		content = array(textBlock(testenv.RandomText(r, 3, 80)))
	}
	return jsonl.NewObject(256).String("role", "user").Raw("content", content).Number("timestamp", ms(now)).Bytes()
}

func assistantMessage(r *rand.Rand, now time.Time) json.RawMessage {
	blocks := [][]byte{jsonl.NewObject(256).String("type", "thinking").String("thinking", testenv.RandomText(r, 5, 60)).String("thinkingSignature", fmt.Sprintf("sig%x", r.Uint64())).Bytes(), textBlock(testenv.RandomText(r, 5, 120))}
	stop := "stop"
	if r.IntN(2) == 0 {
		args := jsonl.NewObject(64).String("command", "ls -la "+testenv.RandomText(r, 1, 2)).Bytes()
		blocks = append(blocks, jsonl.NewObject(128).String("type", "toolCall").String("id", fmt.Sprintf("toolu_%x", r.Uint64())).
			String("name", "bash").Raw("arguments", args).Bytes())
		stop = "toolUse"
	}
	usage := jsonl.NewObject(128).Number("input", float64(r.IntN(5000))).Number("output", float64(r.IntN(2000))).
		Number("cacheRead", 0).Number("cacheWrite", 0).Number("totalTokens", float64(r.IntN(7000))).Bytes()
	return jsonl.NewObject(1024).String("role", "assistant").Raw("content", array(blocks...)).
		String("api", "anthropic-messages").String("provider", "anthropic").String("model", "claude-sonnet-4-5").
		Raw("usage", usage).String("stopReason", stop).Number("timestamp", ms(now)).Bytes()
}

func toolResult(r *rand.Rand, now time.Time) json.RawMessage {
	out := testenv.RandomText(r, 20, 400)
	return jsonl.NewObject(len(out)+256).String("role", "toolResult").String("toolCallId", fmt.Sprintf("toolu_%x", r.Uint64())).
		String("toolName", "bash").Raw("content", array(textBlock(out))).Bool("isError", r.IntN(10) == 0).
		Number("timestamp", ms(now)).Bytes()
}

func bigToolResult(r *rand.Rand, now time.Time) json.RawMessage {
	var b strings.Builder
	for b.Len() < 8<<10+r.IntN(24<<10) {
		b.WriteString(testenv.RandomText(r, 10, 30))
		b.WriteByte('\n')
	}
	return jsonl.NewObject(b.Len()+256).String("role", "toolResult").String("toolCallId", fmt.Sprintf("toolu_%x", r.Uint64())).
		String("toolName", "read").Raw("content", array(textBlock(b.String()))).Bool("isError", false).
		Number("timestamp", ms(now)).Bytes()
}

// legacySession returns a version 1 (no ids, firstKeptEntryIndex) or
// version 2 (ids, hookMessage role) session file.
func legacySession(r *rand.Rand, id string, v int, now time.Time) []byte {
	var buf bytes.Buffer
	hdr := jsonl.NewObject(200).String("type", "session")
	if v == 2 {
		hdr.Number("version", 2)
	}
	hdr.String("id", id).String("timestamp", jsonl.ISOTime(now)).String("cwd", crashCwd)
	buf.Write(hdr.Bytes())
	buf.WriteByte('\n')
	n := 2 + r.IntN(12)
	prev := ""
	for i := 1; i <= n; i++ {
		now = now.Add(time.Second)
		var msg []byte
		switch {
		case i%2 == 1:
			msg = userMessage(r, now)
		case v == 2 && r.IntN(4) == 0:
			msg = jsonl.NewObject(128).String("role", "hookMessage").String("customType", "old-hook").
				String("content", testenv.RandomText(r, 2, 8)).Bool("display", true).Number("timestamp", ms(now)).Bytes()
		default:
			msg = assistantMessage(r, now)
		}
		e := jsonl.NewObject(len(msg)+128).String("type", "message")
		if v == 2 {
			eid := fmt.Sprintf("%08x", r.Uint32())
			e.String("id", eid)
			if prev == "" {
				e.Null("parentId")
			} else {
				e.String("parentId", prev)
			}
			prev = eid
		}
		e.String("timestamp", jsonl.ISOTime(now)).Raw("message", msg)
		buf.Write(e.Bytes())
		buf.WriteByte('\n')
		if v == 1 && i > 3 && r.IntN(4) == 0 {
			c := jsonl.NewObject(128).String("type", "compaction").String("timestamp", jsonl.ISOTime(now)).
				String("summary", testenv.RandomText(r, 5, 20)).Number("firstKeptEntryIndex", float64(1+r.IntN(i))).
				Number("tokensBefore", float64(r.IntN(9000))).Bytes()
			buf.Write(c)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}
