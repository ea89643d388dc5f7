package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// ReplicatorOptions tune continuous replication.
type ReplicatorOptions struct {
	// Delay is how long the replicator gathers appends before shipping
	// them (one segment for a burst); 0 means 50 ms.
	Delay time.Duration
	// CloseTimeout bounds how long a session's Close and the
	// Replicator's Close wait for what was appended to be shipped; 0
	// means 10 seconds.
	CloseTimeout time.Duration
	// MaxBackoff bounds the wait between attempts while the remote is
	// unreachable; 0 means 5 seconds.
	MaxBackoff time.Duration
}

// Replicator ships the lines appended to open sessions to the remote in
// the background: it is an engine.Replicator, set as
// engine.StoreOptions.Replicator. An append never waits for the network: it
// marks its file dirty and returns. A background loop uploads the
// complete lines each dirty file gained as one segment and manifest
// generation, usually within Delay plus two requests; while the remote is
// unreachable it retries with backoff and catches up when it is back.
// Nothing is lost when the process dies: what was not shipped is still in
// the local file, and the next push (or Replicator) ships it.
type Replicator struct {
	r    *Remote
	o    ReplicatorOptions
	mu   sync.Mutex
	cond *sync.Cond
	// dirty holds the files with appends not yet shipped, with the time
	// of the first such append; busy is the file being shipped.
	dirty   map[string]time.Time
	busy    string
	cache   map[string]*replState
	lastErr error
	closed  bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	shipped func(path string, lag time.Duration) // test and benchmark hook
}

var _ engine.Replicator = (*Replicator)(nil)

// replState is what the replicator knows of a session's remote copy.
type replState struct {
	man *Manifest
	st  *sessionState
}

// NewReplicator starts a replicator shipping to r. Close stops it.
func NewReplicator(r *Remote, o ReplicatorOptions) *Replicator {
	if o.Delay <= 0 {
		o.Delay = 50 * time.Millisecond
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 10 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	x := &Replicator{r: r, o: o, dirty: map[string]time.Time{}, cache: map[string]*replState{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	x.cond = sync.NewCond(&x.mu)
	go x.loop()
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
	if _, ok := x.dirty[path]; !ok && !x.closed {
		x.dirty[path] = time.Now()
	}
	x.mu.Unlock()
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// Closed waits, up to CloseTimeout, until what was appended to path has
// been shipped. When the time runs out the file stays dirty: the
// replicator keeps trying until it is closed.
func (x *Replicator) Closed(path string) {
	_ = x.wait(func() bool { _, d := x.dirty[path]; return !d && x.busy != path }, x.o.CloseTimeout)
}

// Flush waits until every dirty file has been shipped, or ctx is done.
func (x *Replicator) Flush(ctx context.Context) error {
	deadline, ok := ctx.Deadline()
	timeout := time.Hour
	if ok {
		timeout = time.Until(deadline)
	}
	return x.wait(func() bool { return len(x.dirty) == 0 && x.busy == "" }, timeout)
}

// wait waits for cond (checked under mu) for at most d.
func (x *Replicator) wait(cond func() bool, d time.Duration) error {
	t := time.AfterFunc(d, func() { x.mu.Lock(); x.cond.Broadcast(); x.mu.Unlock() })
	defer t.Stop()
	end := time.Now().Add(d)
	x.mu.Lock()
	defer x.mu.Unlock()
	for !cond() {
		if !time.Now().Before(end) || x.closedDone() {
			if x.lastErr != nil {
				return fmt.Errorf("replicate: %d %s not shipped: %w", len(x.dirty), plural(len(x.dirty), "session", "sessions"), x.lastErr)
			}
			return fmt.Errorf("replicate: %d %s not shipped in %v", len(x.dirty), plural(len(x.dirty), "session", "sessions"), d)
		}
		x.cond.Wait()
	}
	return nil
}

func (x *Replicator) closedDone() bool {
	select {
	case <-x.done:
		return true
	default:
		return false
	}
}

// Close ships what is dirty (waiting up to CloseTimeout) and stops. It
// returns an error naming what could not be shipped; those lines are
// still in the local files for the next push.
func (x *Replicator) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.mu.Unlock()
	err := x.wait(func() bool { return len(x.dirty) == 0 && x.busy == "" }, x.o.CloseTimeout)
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	close(x.stop)
	<-x.done
	x.mu.Lock()
	x.cond.Broadcast()
	x.mu.Unlock()
	return err
}

func (x *Replicator) loop() {
	defer close(x.done)
	backoff := time.Duration(0)
	for {
		select {
		case <-x.stop:
			return
		case <-x.kick:
		case <-time.After(max(backoff, 250*time.Millisecond)):
		}
		if backoff > 0 {
			select {
			case <-x.stop:
				return
			case <-time.After(backoff):
			}
		} else {
			// Gather a burst of appends into one segment.
			select {
			case <-x.stop:
				return
			case <-time.After(x.o.Delay):
			}
		}
		failed := false
		for {
			path, since, ok := x.next()
			if !ok {
				break
			}
			err := x.ship(path)
			x.mu.Lock()
			x.busy = ""
			if err != nil {
				x.lastErr = err
				if _, again := x.dirty[path]; !again {
					x.dirty[path] = since // keep the oldest append's time
				}
				failed = true
			} else if f := x.shipped; f != nil {
				x.mu.Unlock()
				f(path, time.Since(since))
				x.mu.Lock()
			}
			x.cond.Broadcast()
			x.mu.Unlock()
			if failed {
				break
			}
		}
		if failed {
			backoff = min(max(2*backoff, 100*time.Millisecond), x.o.MaxBackoff)
		} else {
			backoff = 0
			x.mu.Lock()
			x.lastErr = nil
			x.mu.Unlock()
		}
	}
}

// next takes the dirty file waiting longest.
func (x *Replicator) next() (string, time.Time, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.dirty) == 0 {
		return "", time.Time{}, false
	}
	paths := make([]string, 0, len(x.dirty))
	for p := range x.dirty {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return x.dirty[paths[i]].Before(x.dirty[paths[j]]) })
	p := paths[0]
	since := x.dirty[p]
	delete(x.dirty, p)
	x.busy = p
	return p, since, true
}

// ship pushes one file's new lines.
func (x *Replicator) ship(path string) error {
	name := filepath.Base(path)
	if !validPiName(name) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := x.r
	if err := r.lockRun(ctx); err != nil {
		return err
	}
	defer r.unlockRun()
	x.mu.Lock()
	c := x.cache[path]
	x.mu.Unlock()
	for try := 0; ; try++ {
		if c == nil {
			h, err := r.b.head(ctx, KindPi, name)
			if err != nil {
				return err
			}
			c = &replState{st: &sessionState{Path: path}}
			if h != nil {
				m, err := r.b.getManifest(ctx, h)
				if err != nil {
					return err
				}
				c.man = m
			}
		}
		nextGen := int64(1)
		if c.man != nil {
			nextGen = c.man.Gen + 1
		}
		segs := map[int][]byte{}
		fetch := func(i int) ([]byte, error) {
			if d, ok := segs[i]; ok {
				return d, nil
			}
			s := c.man.Segments[i]
			d, err := r.b.getData(ctx, s.Object, s.SHA256, s.Plain)
			segs[i] = d
			return d, err
		}
		_, nm, err := r.pushPi(ctx, name, path, c.man, nextGen, c.st, fetch)
		if errors.Is(err, errRace) && try < 8 {
			c = nil // someone else published: read the remote again
			continue
		}
		if err != nil {
			return err
		}
		if nm != nil {
			old := c.man
			c.man = nm
			if old != nil {
				_ = r.b.remove(ctx, r.b.manifestKey(KindPi, name, old.Gen))
			}
		}
		x.mu.Lock()
		x.cache[path] = c
		x.mu.Unlock()
		return nil
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
