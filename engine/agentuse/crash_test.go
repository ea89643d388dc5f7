package agentuse_test

// AgentUse crash workloads: sessions, subagents, messages, parts and their
// updates written through a Session on a vfstest.CrashFS, cut by a
// simulated power cut before a random filesystem call. Every AgentUse file
// is replaced atomically, so after the crash every file whose write was
// acknowledged must hold exactly its last acknowledged bytes, or, for the
// one file being written when the power went, the complete new bytes; and
// the store must read without corruption. Flags and seeds are those of
// TestCrashWorkloads.
//
// The writer lock lives on the real filesystem (lock.Acquire), so the
// store's paths lie under a real temporary directory: the locks go there,
// the data to the CrashFS at the same paths.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

func TestCrashAgentUseWorkloads(t *testing.T) {
	t.Parallel()
	plan := testenv.CrashPlan(t, 5, 20, 0.25)
	var st auStats
	for i := 0; plan.More(i); i++ {
		w := newAUWorkload(t, plan.Seed+uint64(i), &st)
		w.run()
		st.workloads++
		if t.Failed() {
			t.Fatalf("workload with seed %d failed; rerun it with -crash.seed=%d -crash.workloads=1", w.seed, w.seed)
		}
	}
	t.Logf("AgentUse: workloads %d, crashes injected %d (%d inside an operation), acknowledged files checked %d, lost or changed %d, files written when the power went %d",
		st.workloads, st.crashes, st.midOp, st.checked, st.lost, st.inflight)
	if st.lost != 0 {
		t.Errorf("%d acknowledged AgentUse files lost or changed", st.lost)
	}
	if st.checked == 0 {
		t.Error("the run checked nothing")
	}
}

type auStats struct {
	workloads, crashes, midOp, checked, lost, inflight int
}

type auWorkload struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	crng  *rand.Rand
	st    *auStats
	clock time.Time
	root  string // the store's session directory

	disk *vfstest.CrashFS
	ffs  *vfstest.FaultFS

	opsLeft  int
	dead     bool
	inflight string // the file whose atomic replace was under way at the cut
	snapshot *vfstest.CrashFS
	ackedAt  map[string][]byte

	acked    map[string][]byte // every AgentUse file -> its acknowledged bytes
	w        *agentuse.Session
	sessions []string            // ids of sessions created
	messages map[string][]string // session id -> message ids
	parts    map[string][]string // message id -> part ids
}

func newAUWorkload(t *testing.T, seed uint64, st *auStats) *auWorkload {
	base := t.TempDir()
	w := &auWorkload{
		t: t, seed: seed, st: st,
		rng:      rand.New(rand.NewPCG(seed, 0xa6e47)),
		crng:     rand.New(rand.NewPCG(seed, 0xc4a55)),
		clock:    time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		root:     filepath.Join(base, "agentuse", "project", "0123456789abcdef", "session"),
		disk:     vfstest.NewCrashFS(),
		acked:    make(map[string][]byte),
		messages: make(map[string][]string),
		parts:    make(map[string][]string),
	}
	if err := vfs.MkdirAllSync(w.disk, base, vfs.DirMode); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *auWorkload) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d: "+format, append([]any{w.seed}, args...)...)
}

// rngReader feeds ulid from the workload's random source.
type rngReader struct{ r *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}

func (w *auWorkload) store() *agentuse.Store {
	s, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{
		Dir:  w.root,
		FS:   w.ffs,
		Sync: agentuse.SyncEach,
		Now: func() time.Time {
			w.clock = w.clock.Add(time.Duration(1+w.rng.IntN(900)) * time.Millisecond)
			return w.clock
		},
		NewID: func() string {
			return ulid.MustNew(ulid.Timestamp(w.clock), rngReader{w.rng}).String()
		},
	})
	if err != nil {
		w.fatalf("open store: %v", err)
	}
	return s
}

func (w *auWorkload) run() {
	for c := 2 + w.rng.IntN(3); c > 0; c-- {
		w.cycle()
	}
}

func (w *auWorkload) cycle() {
	w.ffs = vfstest.NewFaultFS(w.disk)
	w.dead, w.inflight = false, ""
	steps := 5 + w.rng.IntN(30)
	w.opsLeft = 1 + w.rng.IntN(steps*5)
	w.ffs.SetHook(w.hook)
	s := w.store()
	for step := 0; step < steps && !w.dead; step++ {
		w.step(s)
	}
	if w.dead {
		w.st.midOp++
	} else {
		w.cut()
	}
	w.st.crashes++
	if w.w != nil {
		_ = w.w.Close()
		w.w = nil
	}
	w.reboot()
}

func (w *auWorkload) hook(op vfstest.Op, path string) error {
	if w.dead {
		return testenv.ErrPowerCut
	}
	if op == vfstest.OpCreate && vfs.IsTempName(path) {
		w.inflight = path[:strings.LastIndex(path, vfs.TempSuffix)]
	}
	if !op.Mutates() {
		return nil
	}
	w.opsLeft--
	if w.opsLeft <= 0 {
		w.cut()
		return testenv.ErrPowerCut
	}
	return nil
}

func (w *auWorkload) cut() {
	w.snapshot = w.disk.CrashClone(w.crng)
	w.ackedAt = make(map[string][]byte, len(w.acked))
	for f, b := range w.acked {
		w.ackedAt[f] = b
	}
	w.dead = true
}

// do runs one writer call; on success every file on disk is acknowledged.
func (w *auWorkload) do(what string, err error) bool {
	w.t.Helper()
	if err != nil {
		if w.dead {
			return false
		}
		w.fatalf("%s: %v", what, err)
	}
	w.inflight = ""
	w.acked = w.files(w.disk)
	return true
}

// files returns every AgentUse data file under the root and its bytes.
func (w *auWorkload) files(fsys vfs.FS) map[string][]byte {
	out := make(map[string][]byte)
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.fatalf("read dir %s: %v", dir, err)
			}
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				walk(p)
			case layout.IsAgentUseDataFile(e.Name()):
				b, err := fsys.ReadFile(p)
				if err != nil {
					w.fatalf("read %s: %v", p, err)
				}
				out[p] = b
			}
		}
	}
	walk(w.root)
	return out
}

func (w *auWorkload) pick(list []string) string { return list[w.rng.IntN(len(list))] }

func (w *auWorkload) step(s *agentuse.Store) {
	r := w.rng
	if w.w == nil {
		if len(w.sessions) == 0 || r.IntN(3) == 0 {
			wr, err := s.Create(context.Background(), agentuse.SessionSpec{
				Agent: agentuse.Agent{ID: "crash agent", Name: "crash agent"}, Model: "demo:hello",
				Project: agentuse.Project{Root: "/work", Cwd: "/work"},
			})
			if !w.do("create session", err) {
				return
			}
			w.w = wr
			w.sessions = append(w.sessions, wr.ID())
			return
		}
		id := w.pick(w.sessions)
		wr, err := s.Open(context.Background(), id)
		if err != nil && errors.Is(err, agentuse.ErrNotFound) && !w.dead {
			return // its creation was never acknowledged and did not survive
		}
		if !w.do("open writer "+id, err) {
			return
		}
		w.w = wr
		return
	}
	wr := w.w
	msgs := w.messages[wr.ID()]
	switch k := r.IntN(20); {
	case k < 4 || len(msgs) == 0:
		id, err := wr.AddMessage(agentuse.MessageSpec{Task: testenv.RandomText(r, 3, 20), ModelID: "demo:hello", Cwd: "/work", Root: "/work"})
		if w.do("add message", err) {
			w.messages[wr.ID()] = append(msgs, id)
		}
	case k < 10:
		m := w.pick(msgs)
		var p agentuse.Part
		switch r.IntN(3) {
		case 0:
			p = agentuse.TextPart(testenv.RandomText(r, 5, 80), w.clock)
		case 1:
			p = agentuse.ToolPart(fmt.Sprintf("call_%x", r.Uint32()), "bash", map[string]any{"command": testenv.RandomText(r, 1, 4)}, w.clock)
		default:
			p = agentuse.ReasoningPart(testenv.RandomText(r, 5, 40), nil, w.clock)
		}
		id, err := wr.AddPart(m, p)
		if w.do("add part", err) {
			w.parts[m] = append(w.parts[m], id)
		}
	case k < 15:
		m := w.pick(msgs)
		if len(w.parts[m]) == 0 {
			return
		}
		w.do("update part", wr.UpdatePart(m, w.pick(w.parts[m]), agentuse.Field{Key: "text", Value: testenv.RandomText(r, 5, 120)}, agentuse.Field{Key: "time", Value: map[string]any{"start": w.clock.UnixMilli(), "end": w.clock.UnixMilli() + 5}}))
	case k < 16:
		w.do("complete message", wr.CompleteMessage(w.pick(msgs)))
	case k < 17:
		w.do("set status", wr.SetStatus([]string{agentuse.StatusRunning, agentuse.StatusCompleted, agentuse.StatusSuspended}[r.IntN(3)]))
	case k < 18:
		sub, err := wr.CreateSubagent(context.Background(), agentuse.SessionSpec{
			Agent: agentuse.Agent{ID: "helper", Name: "helper"}, Model: "demo:hello",
			Project: agentuse.Project{Root: "/work", Cwd: "/work"},
		})
		if w.do("create subagent", err) {
			_ = wr.Close()
			w.w = sub
			w.sessions = append(w.sessions, sub.ID())
		}
	default:
		_ = wr.Close()
		w.w = nil
	}
}

// reboot replaces the disk with the crash image and checks every
// acknowledged file and the store's readers.
func (w *auWorkload) reboot() {
	w.disk = w.snapshot
	got := w.files(w.disk)
	for path, want := range w.ackedAt {
		w.st.checked++
		b, ok := got[path]
		switch {
		case ok && bytes.Equal(b, want):
		case ok && path == w.inflight && jsonl.Valid(b):
			w.st.inflight++
		default:
			w.st.lost++
			w.t.Errorf("seed %d: %s after the crash: present %v, %d bytes; acknowledged %d bytes", w.seed, path, ok, len(b), len(want))
		}
	}
	for path, b := range got {
		if _, ok := w.ackedAt[path]; !ok && path != w.inflight {
			w.t.Errorf("seed %d: %s appeared after the crash without being written (%d bytes)", w.seed, path, len(b))
		}
	}
	w.ffs = vfstest.NewFaultFS(w.disk)
	s := w.store()
	sessions, err := collectSessions(context.Background(), s)
	if err != nil {
		w.fatalf("list sessions after the crash: %v", err)
	}
	for _, x := range sessions {
		if x.Err != nil {
			w.t.Errorf("seed %d: session %s unreadable after the crash: %v", w.seed, x.Dir, x.Err)
			continue
		}
		c, err := s.Read(context.Background(), x)
		if err != nil {
			w.fatalf("read session %s after the crash: %v", x.Dir, err)
		}
		for _, p := range c.Problems {
			w.t.Errorf("seed %d: corrupt file after the crash: %v", w.seed, p)
		}
	}
	w.acked = got
}

// TestStoreInNewDirectoriesSurvivesPowerCut creates an AgentUse
// session in a store whose directories do not exist yet and takes the
// harshest crash. Only the parent of the session directory used to be
// synced when the store root was created, so the whole store, with every
// acknowledged file in it, could vanish.
func TestStoreInNewDirectoriesSurvivesPowerCut(t *testing.T) {
	t.Parallel()
	base := t.TempDir() // the writer lock lives on the real filesystem
	disk := vfstest.NewCrashFS()
	if err := vfs.MkdirAllSync(disk, base, vfs.DirMode); err != nil {
		t.Fatal(err)
	}
	root := base + "/agentuse/project/0123456789abcdef/session"
	s, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: root, FS: disk})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Create(t.Context(), agentuse.SessionSpec{Agent: agentuse.Agent{ID: "a", Name: "a"}, Model: "demo:hello"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	msg, err := w.AddMessage(agentuse.MessageSpec{Task: "t", ModelID: "demo:hello"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := layout.AgentUseMessagePath(w.Dir(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if u := disk.Unsynced(); len(u) != 0 {
		t.Errorf("left unsynced after acknowledged writes: %q", u)
	}
	if _, err := disk.CrashClone(nil).ReadFile(file); err != nil {
		t.Errorf("acknowledged message lost in a power cut: %v", err)
	}
}
