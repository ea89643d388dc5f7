package replica

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// ReplicatorOptions tune continuous replication.
type ReplicatorOptions struct {
	// Delay is how long the replicator gathers appends before shipping
	// them (one segment for a burst); 0 means 50 ms.
	Delay time.Duration
	// Interval is the least time between two shipments of one session:
	// the request budget. A session being written costs about one PUT
	// per Interval (its manifest, which carries small batches of lines
	// itself; see Options.InlineMax), and an append reaches the remote
	// within Interval plus a request. 0 means 930 ms: about 1.08 PUTs a
	// second, and lines on the remote within a second; negative means
	// no limit (every burst is shipped after Delay).
	Interval time.Duration
	// CloseTimeout bounds how long a session's Close and the
	// Replicator's Close wait for what was appended to be shipped; 0
	// means 10 seconds.
	CloseTimeout time.Duration
	// MaxBackoff bounds the wait between attempts while the remote is
	// unreachable; 0 means 5 seconds.
	MaxBackoff time.Duration
	// Parallel is how many sessions are shipped at once; 0 means 32.
	Parallel int

	// Lease makes every session opened for writing through the store
	// take a lease on the remote, so that one machine at a time writes
	// it (see Replicator.Lease). Off by default.
	Lease bool
	// LeaseTTL is how long a lease lasts unless renewed: another
	// machine takes it over within LeaseTTL of the holder's last
	// renewal. The holder renews it every LeaseTTL/4 (a PUT) and stops
	// writing when it could not for 3/5 of it. 0 means 30 seconds.
	LeaseTTL time.Duration
	// Command is recorded in the leases taken (default: the program
	// name).
	Command string
}

// Replicator ships the lines appended to open sessions to the
// remote in the background: it is an engine.Replicator, set as
// engine.StoreOptions.Replicator. An append never waits for the network:
// it marks its file dirty and returns. Background workers upload the
// complete lines each dirty file gained as the session's next manifest
// generation, at most once per Interval per session (Delay after the
// first append of a burst when the session was quiet); while the remote
// is unreachable they retry with backoff and catch up when it is back.
// Nothing is lost when the process dies: what was not shipped is still
// in the local file, and the next push (or Replicator) ships it.
//
// With ReplicatorOptions.Lease it is an engine.Leaser too: a session
// opened for writing holds a lease object on the remote (see Lease).
//
// With Options.StateDir set, it writes what it did (requests by kind,
// bytes, shipments) to a file there every 10 seconds and on Close, which
// Remote.Replicators reads (sessctl sync status --json).
type Replicator struct {
	r *Remote
	o ReplicatorOptions

	mu      sync.Mutex
	cond    *sync.Cond
	sess    map[string]*rsess
	due     dueHeap
	ready   []*rsess
	busy    int
	lastErr error
	deleted []error // sessions not replicated: deleted from the remote
	closed  bool
	stopped bool
	shipped func(path string, lag time.Duration) // test and benchmark hook
	leases  leaseSeen

	wake     chan struct{}
	done     chan struct{}
	workers  sync.WaitGroup
	ships    atomic.Int64
	shipped1 map[string]bool // the sessions shipped at least once
	started  time.Time
	req0     RequestCounts // the Remote's counts when it started
	up0      int64
	down0    int64
}

var (
	_ engine.Replicator = (*Replicator)(nil)
	_ engine.Leaser     = (*Replicator)(nil)
)

// rsess is what the replicator knows of one session file.
type rsess struct {
	path    string
	dirty   time.Time // the oldest append not shipped; zero: none
	deleted bool      // deleted from the remote: not shipped
	urgent  bool      // closing: shipped without waiting for Interval
	busy    bool
	last    time.Time // when its last shipment started
	retry   time.Time // not before, after a failure
	backoff time.Duration
	idx     int // in the heap; -1 when not in it
	at      time.Time

	man     *Manifest
	st      *sessionState
	loaded  bool
	old     []string // superseded manifest keys, deleted now and then
	cleaned time.Time
}

// cleanEvery is how often a session's superseded manifest generations
// are deleted (a DELETE each): until then readers list a few keys more.
const cleanEvery = 10 * time.Second

// NewReplicator starts a replicator shipping to r. Close stops it.
func NewReplicator(r *Remote, o ReplicatorOptions) *Replicator {
	if o.Delay <= 0 {
		o.Delay = 50 * time.Millisecond
	}
	if o.Interval == 0 {
		o.Interval = 930 * time.Millisecond
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 10 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.Parallel <= 0 {
		o.Parallel = 32
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	x := &Replicator{r: r, o: o, sess: map[string]*rsess{}, wake: make(chan struct{}, 1), done: make(chan struct{}), started: time.Now(),
		shipped1: map[string]bool{}, req0: r.b.st.counts(), up0: r.b.st.uploaded.Load(), down0: r.b.st.downloaded.Load()}
	x.cond = sync.NewCond(&x.mu)
	go x.schedule()
	for range o.Parallel {
		x.workers.Add(1)
		go x.work()
	}
	return x
}

// OnShipped sets a function called after each file is shipped, with the
// time since its oldest unshipped append (for measuring lag).
func (x *Replicator) OnShipped(f func(path string, lag time.Duration)) {
	x.mu.Lock()
	x.shipped = f
	x.mu.Unlock()
}

// Appended marks path dirty; it never blocks.
func (x *Replicator) Appended(path string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	s := x.sess[path]
	if s == nil {
		s = &rsess{path: path, idx: -1}
		x.sess[path] = s
	}
	if s.dirty.IsZero() && !s.deleted {
		s.dirty = time.Now()
		x.enqueue(s)
	}
}

// when returns when s may be shipped next.
func (x *Replicator) when(s *rsess) time.Time {
	t := s.dirty.Add(x.o.Delay)
	if x.o.Interval > 0 && !s.urgent {
		if n := s.last.Add(x.o.Interval); n.After(t) {
			t = n
		}
	}
	if s.retry.After(t) {
		t = s.retry
	}
	return t
}

// enqueue puts a dirty, idle session in the heap (mu held).
func (x *Replicator) enqueue(s *rsess) {
	if s.busy || s.dirty.IsZero() {
		return
	}
	at := x.when(s)
	if s.idx >= 0 {
		s.at = at
		heap.Fix(&x.due, s.idx)
	} else {
		s.at = at
		heap.Push(&x.due, s)
	}
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// schedule moves the sessions that are due to the workers.
func (x *Replicator) schedule() {
	defer close(x.done)
	statsAt := time.Now()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		x.mu.Lock()
		now := time.Now()
		for x.due.Len() > 0 && !x.due[0].at.After(now) {
			s := heap.Pop(&x.due).(*rsess)
			s.busy = true
			x.busy++
			x.ready = append(x.ready, s)
		}
		if len(x.ready) > 0 {
			x.cond.Broadcast()
		}
		wait := 250 * time.Millisecond
		if x.due.Len() > 0 {
			wait = min(wait, x.due[0].at.Sub(now))
		}
		stopped := x.stopped
		x.mu.Unlock()
		if stopped {
			return
		}
		if now.Sub(statsAt) >= statsEvery {
			statsAt = now
			x.saveStats()
		}
		t.Reset(max(wait, time.Millisecond))
		select {
		case <-x.wake:
			if !t.Stop() {
				<-t.C
			}
		case <-t.C:
		}
	}
}

// work ships the sessions the scheduler hands over.
func (x *Replicator) work() {
	defer x.workers.Done()
	for {
		x.mu.Lock()
		for len(x.ready) == 0 && !x.stopped {
			x.cond.Wait()
		}
		if len(x.ready) == 0 {
			x.mu.Unlock()
			return
		}
		s := x.ready[0]
		x.ready = x.ready[1:]
		since := s.dirty
		s.dirty = time.Time{}
		s.last = time.Now()
		x.mu.Unlock()

		cleanup, err := x.ship(s)

		x.mu.Lock()
		s.busy = false
		x.busy--
		if errors.Is(err, errDeleted) {
			// Never retried: the deletion stands (Close reports it).
			s.deleted, s.dirty = true, time.Time{}
			x.deleted = append(x.deleted, err)
		} else if err != nil {
			x.lastErr = err
			if s.dirty.IsZero() || since.Before(s.dirty) {
				s.dirty = since // keep the oldest append's time
			}
			s.backoff = min(max(2*s.backoff, 100*time.Millisecond), x.o.MaxBackoff)
			s.retry = time.Now().Add(s.backoff)
		} else {
			s.backoff, s.retry = 0, time.Time{}
			if s.dirty.IsZero() {
				s.urgent = false
			}
			x.shipped1[s.path] = true
			if f := x.shipped; f != nil {
				x.mu.Unlock()
				f(s.path, time.Since(since))
				x.mu.Lock()
			}
			if x.allClean() {
				x.lastErr = nil
			}
		}
		x.enqueue(s)
		x.cond.Broadcast()
		x.mu.Unlock()
		// After the shipment is done: the session may be shipped again
		// meanwhile, and its lag does not include these requests.
		x.deleteOld(cleanup)
	}
}

// allClean reports whether nothing is dirty or being shipped (mu held).
func (x *Replicator) allClean() bool {
	if x.busy > 0 || len(x.ready) > 0 {
		return false
	}
	for _, s := range x.sess {
		if !s.dirty.IsZero() {
			return false
		}
	}
	return true
}

// clean reports whether path has nothing left to ship (mu held).
func (x *Replicator) clean(path string) bool {
	s := x.sess[path]
	return s == nil || (s.dirty.IsZero() && !s.busy)
}

// Closed waits, up to CloseTimeout, until what was appended to path has
// been shipped. When the time runs out the file stays dirty: the
// replicator keeps trying until it is closed.
func (x *Replicator) Closed(path string) {
	x.hurry(path)
	if x.wait(func() bool { return x.clean(path) }, x.o.CloseTimeout) == nil {
		x.forget(path)
	}
}

// hurry ships what is dirty of path (of every session, for "") without
// waiting for Interval: it is being closed or flushed.
func (x *Replicator) hurry(path string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for p, s := range x.sess {
		if path == "" || p == path {
			s.urgent = true
			x.enqueue(s)
		}
	}
}

// forget deletes the superseded manifest generations of a session that
// was closed and drops what the replicator cached of it.
func (x *Replicator) forget(path string) {
	x.mu.Lock()
	s := x.sess[path]
	if s == nil || !s.dirty.IsZero() || s.busy || s.idx >= 0 {
		x.mu.Unlock()
		return
	}
	delete(x.sess, path)
	old := s.old
	x.mu.Unlock()
	x.deleteOld(old)
}

// deleteOld deletes superseded manifest generations.
func (x *Replicator) deleteOld(keys []string) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), x.o.CloseTimeout)
	defer cancel()
	for _, k := range keys {
		_ = x.r.b.remove(ctx, k)
	}
}

// Flush waits until every dirty file has been shipped, or ctx is done.
func (x *Replicator) Flush(ctx context.Context) error {
	x.hurry("")
	deadline, ok := ctx.Deadline()
	timeout := time.Hour
	if ok {
		timeout = time.Until(deadline)
	}
	return x.wait(x.allClean, timeout)
}

// wait waits for cond (checked under mu) for at most d.
func (x *Replicator) wait(cond func() bool, d time.Duration) error {
	t := time.AfterFunc(d, func() { x.mu.Lock(); x.cond.Broadcast(); x.mu.Unlock() })
	defer t.Stop()
	end := time.Now().Add(d)
	x.mu.Lock()
	defer x.mu.Unlock()
	for !cond() {
		if !time.Now().Before(end) || x.stopped {
			n := 0
			for _, s := range x.sess {
				if !s.dirty.IsZero() || s.busy {
					n++
				}
			}
			if x.lastErr != nil {
				return fmt.Errorf("replicate: %d %s not shipped: %w", n, plural(n, "session", "sessions"), x.lastErr)
			}
			return fmt.Errorf("replicate: %d %s not shipped in %v", n, plural(n, "session", "sessions"), d)
		}
		x.cond.Wait()
	}
	return nil
}

// Close ships what is dirty (waiting up to CloseTimeout) and stops. It
// returns an error naming what could not be shipped; those lines are
// still in the local files for the next push. Sessions that were not
// replicated because their remote copy was deleted (Remote.Delete) are
// named too.
func (x *Replicator) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.mu.Unlock()
	x.hurry("")
	err := x.wait(x.allClean, x.o.CloseTimeout)
	x.mu.Lock()
	x.closed = true
	x.stopped = true
	var old []string
	for _, s := range x.sess {
		old = append(old, s.old...)
		s.old = nil
	}
	x.cond.Broadcast()
	x.mu.Unlock()
	select {
	case x.wake <- struct{}{}:
	default:
	}
	<-x.done
	x.workers.Wait()
	x.deleteOld(old)
	x.saveStats()
	x.mu.Lock()
	x.cond.Broadcast()
	deleted := x.deleted
	x.mu.Unlock()
	if err == nil && len(deleted) > 0 {
		err = errors.Join(deleted...)
	}
	return err
}

// errDeleted is a session whose remote copy was deleted (a tombstone):
// the replicator does not bring it back.
var errDeleted = errors.New("the session was deleted from the remote; not replicated")

// ship pushes one file's new lines; every cleanEvery it also returns
// the superseded manifest generations, for the caller to delete once
// the shipment is done.
func (x *Replicator) ship(s *rsess) (cleanup []string, err error) {
	name := filepath.Base(s.path)
	if !validPiName(name) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := x.r
	for try := 0; ; try++ {
		if !s.loaded {
			if err := x.load(ctx, s, name); err != nil {
				return nil, err
			}
		}
		nextGen := int64(1)
		if s.man != nil {
			nextGen = s.man.Gen + 1
		}
		_, nm, err := r.pushPi(ctx, name, s.path, s.man, nextGen, s.st, nil)
		if errors.Is(err, errRace) && try < 8 {
			s.loaded = false // someone else published: read the remote again
			continue
		}
		if err != nil {
			if errors.Is(err, ErrCorruptRemote) {
				s.loaded = false
			}
			return nil, err
		}
		if nm != nil {
			x.ships.Add(1)
			if s.man != nil {
				s.old = append(s.old, r.b.manifestKey(KindPi, name, s.man.Gen))
			}
			s.man = nm
		}
		if len(s.old) > 0 && time.Since(s.cleaned) >= cleanEvery {
			cleanup = s.old
			s.old, s.cleaned = nil, time.Now()
		}
		return cleanup, nil
	}
}

// load reads what the remote holds of a session: its newest manifest,
// and whether it was deleted; the local file is compared with it by
// checksums (validState), not by downloading it.
func (x *Replicator) load(ctx context.Context, s *rsess, name string) error {
	r := x.r
	if dead, err := r.b.tombstone(ctx, KindPi, name); err != nil {
		return err
	} else if dead != nil {
		return fmt.Errorf("replicate %s: %w", s.path, errDeleted)
	}
	h, err := r.b.head(ctx, KindPi, name)
	if err != nil {
		return err
	}
	var man *Manifest
	if h != nil {
		if man, err = r.b.getManifest(ctx, h); err != nil {
			return err
		}
		s.old = append(s.old, h.older...)
	}
	fi, err := r.opts.fs().Lstat(s.path)
	if err != nil {
		return err
	}
	s.man = man
	s.st = r.validState(nil, &local{path: s.path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, man)
	s.st.Path = s.path
	s.loaded = true
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// dueHeap orders dirty sessions by when they may be shipped.
type dueHeap []*rsess

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *dueHeap) Push(v any) {
	s := v.(*rsess)
	s.idx = len(*h)
	*h = append(*h, s)
}
func (h *dueHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	s.idx = -1
	*h = old[:len(old)-1]
	return s
}
