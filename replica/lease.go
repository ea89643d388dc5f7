package replica

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/lock"
)

// A lease, l/<kind>/<name>, says which machine writes a session: the
// local writer lock keeps out the other writers of one machine, the
// lease those of the others that share the remote. It is taken with a
// create-only write (or a compare-and-swap of a released or expired
// one), renewed every TTL/4 with a compare-and-swap, and released on
// Close. It expires when its holder stops renewing: another machine
// takes it over once it has seen the same version of it for 4/5 of TTL
// by its own clock (it looks every TTL/10, so within TTL of the last
// renewal), or at once when the holder's last renewal (by the holder's
// clock) is more than TTL plus a minute (or TTL, if longer) in the past.
//
// A holder that cannot renew (a network partition, a remote that is
// down) stops writing before its lease can expire elsewhere: it writes
// only within 3/5 of TTL after it sent its last successful renewal,
// while the others wait 4/5 of TTL after they saw that renewal arrive,
// which is after it was sent.
// What it appended before it stopped is in its local file and shipped
// when the remote is reachable again; if another machine wrote
// meanwhile, the two histories meet as branches (the merge rule keeps
// both).

// ErrLeaseLost is returned (wrapped) by a write to a session whose lease
// on the remote expired (it could not be renewed in time) or was taken
// over by another machine.
var ErrLeaseLost = errors.New("the session's lease on the remote is not held")

// leaseRec is the content of a lease object.
type leaseRec struct {
	Format   string `json:"format"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Host     string `json:"host"`
	PID      int    `json:"pid"`
	Command  string `json:"command,omitempty"`
	User     string `json:"user,omitempty"`
	Since    string `json:"since"`
	Renewed  string `json:"renewed"`
	TTL      int64  `json:"ttlMs"`
	Token    string `json:"token"`
	Released bool   `json:"released,omitempty"`
}

func leaseKey(kind, name string) string { return "l/" + kind + "/" + name }

// leaseSeen remembers, per lease key, the version of another holder's
// lease last seen and since when (monotonic), for expiry by observation.
type leaseSeen struct {
	mu   sync.Mutex
	seen map[string]seenLease
}

type seenLease struct {
	etag string
	at   time.Time
}

// observe returns since when the version etag of key has been seen.
func (ls *leaseSeen) observe(key, etag string) time.Time {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.seen == nil {
		ls.seen = map[string]seenLease{}
	}
	s, ok := ls.seen[key]
	if !ok || s.etag != etag {
		s = seenLease{etag: etag, at: time.Now()}
		ls.seen[key] = s
	}
	return s.at
}

// Lease takes the lease of the session file at path on the remote, when
// ReplicatorOptions.Lease is set (else it returns nil): the engine calls
// it when it opens or creates a session for writing, after taking the
// local writer lock (engine.Leaser). While another machine holds the
// lease it fails with an engine.LockedError naming the holder (host, pid,
// command, since), which matches engine.ErrLocked, or with wait waits
// until the lease is released or expires, or ctx is done. The lease is
// renewed in the background; Valid fails with ErrLeaseLost once it was
// not renewed in time; Release waits (up to CloseTimeout) until what was
// appended to the session is shipped, then releases the lease.
func (x *Replicator) Lease(ctx context.Context, path string, wait bool) (engine.WriterLease, error) {
	name := filepath.Base(path)
	if !x.o.Lease || !validPiName(name) {
		return nil, nil
	}
	l, err := x.r.takeLease(ctx, &x.leases, KindPi, name, x.o.LeaseTTL, x.o.Command, wait)
	if err != nil {
		return nil, err
	}
	l.before = func() { x.Closed(path) }
	go l.renew()
	return l, nil
}

// lease is a lease this process holds.
type lease struct {
	r      *Remote
	key    string
	ttl    time.Duration
	before func() // runs before the release: ships what is left

	mu    sync.Mutex
	rec   leaseRec
	etag  string
	until time.Time // writes are allowed until then (monotonic)
	lost  error
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// validFor is the part of TTL a holder writes for after a renewal it
// sent: less than expireAfter, which the others wait after seeing it.
func validFor(ttl time.Duration) time.Duration { return ttl * 3 / 5 }

// expireAfter is how long another machine sees the same version of a
// lease before it takes it over.
func expireAfter(ttl time.Duration) time.Duration { return ttl * 4 / 5 }

// takeLease takes the lease of a session (see Replicator.Lease).
func (r *Remote) takeLease(ctx context.Context, seen *leaseSeen, kind, name string, ttl time.Duration, command string, wait bool) (*lease, error) {
	key := leaseKey(kind, name)
	if command == "" {
		command = filepath.Base(os.Args[0])
	}
	var tok [12]byte
	_, _ = rand.Read(tok[:])
	now := r.opts.now().UTC()
	rec := leaseRec{Format: FormatVersion, Kind: kind, Name: name, Host: r.opts.Host, PID: os.Getpid(), Command: command,
		Since: now.Format(time.RFC3339Nano), Renewed: now.Format(time.RFC3339Nano), TTL: ttl.Milliseconds(), Token: hex.EncodeToString(tok[:])}
	if u, err := user.Current(); err == nil {
		rec.User = u.Username
	}
	poll := min(max(ttl/10, 20*time.Millisecond), time.Second)
	for {
		stored, info, err := r.b.get(ctx, key, maxSmall)
		var cur *leaseRec
		switch {
		case isNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("lease %s: %w", r.b.objectName(key), err)
		default:
			cur = &leaseRec{}
			plain, err := r.b.open(key, stored)
			if err != nil || json.Unmarshal(plain, cur) != nil || cur.TTL <= 0 {
				// Unreadable: held by someone unknown until it expires.
				cur = &leaseRec{TTL: ttl.Milliseconds()}
			}
		}
		free := cur == nil || cur.Released
		if !free {
			curTTL := time.Duration(cur.TTL) * time.Millisecond
			seenAt := seen.observe(key, info.ETag)
			free = time.Since(seenAt) >= expireAfter(curTTL)
			if t, err := time.Parse(time.RFC3339Nano, cur.Renewed); err == nil && r.opts.now().Sub(t) > curTTL+max(curTTL, time.Minute) {
				free = true
			}
		}
		if free {
			rec.Renewed = r.opts.now().UTC().Format(time.RFC3339Nano)
			data, _ := json.Marshal(rec)
			body, err := r.b.seal(data)
			if err != nil {
				return nil, err
			}
			sent := time.Now()
			var oi ObjectInfo
			r.b.st.puts.Add(1)
			if cur == nil {
				oi, err = r.b.c.PutIfAbsent(ctx, key, bytes.NewReader(body), int64(len(body)))
			} else {
				oi, err = r.b.c.PutIfMatch(ctx, key, bytes.NewReader(body), int64(len(body)), info.ETag)
			}
			switch {
			case err == nil:
				return &lease{r: r, key: key, ttl: ttl, rec: rec, etag: oi.ETag, until: sent.Add(validFor(ttl)),
					stop: make(chan struct{}), done: make(chan struct{})}, nil
			case errors.Is(err, ErrObjectExists) || errors.Is(err, ErrObjectChanged) || errors.Is(err, ErrObjectNotFound):
				continue // another machine moved first: look again
			default:
				return nil, fmt.Errorf("lease %s: %w", r.b.objectName(key), err)
			}
		}
		if !wait {
			return nil, r.leaseHeld(key, cur)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (waited until %w)", r.leaseHeld(key, cur), ctx.Err())
		case <-time.After(poll):
		}
	}
}

// leaseHeld is the error of a lease another holder has.
func (r *Remote) leaseHeld(key string, cur *leaseRec) error {
	o := &lock.Owner{PID: cur.PID, Host: cur.Host, User: cur.User, Command: cur.Command, Mode: "write"}
	o.Since, _ = time.Parse(time.RFC3339Nano, cur.Since)
	reason := "holds the session's lease on the remote"
	if t, err := time.Parse(time.RFC3339Nano, cur.Renewed); err == nil {
		reason = fmt.Sprintf("its lease on the remote was renewed %s ago and lasts %s unless renewed",
			r.opts.now().Sub(t).Round(time.Second), (time.Duration(cur.TTL) * time.Millisecond).Round(time.Second))
	}
	if cur.Host == "" {
		o = nil
		reason = "a lease on the remote that cannot be read"
	}
	return &engine.LockedError{Path: r.b.objectName(key), Owner: o, Reason: reason, Now: r.opts.now()}
}

// Valid returns nil while the lease is certainly held: within 3/5 of TTL
// after the last renewal that succeeded was sent.
func (l *lease) Valid() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if !time.Now().Before(l.until) {
		return fmt.Errorf("lease %s: not renewed in time (the remote did not answer): %w", l.r.b.objectName(l.key), ErrLeaseLost)
	}
	return nil
}

// renew renews the lease every TTL/4 (every TTL/20 after a failure)
// until Release.
func (l *lease) renew() {
	defer close(l.done)
	every := l.ttl / 4
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ok := l.renewOnce()
		l.mu.Lock()
		lost := l.lost != nil
		l.mu.Unlock()
		if lost {
			return
		}
		if ok {
			t.Reset(every)
		} else {
			t.Reset(max(l.ttl/20, 10*time.Millisecond))
		}
	}
}

// renewOnce writes the lease again if it still holds this holder's
// version; it reports whether it did.
func (l *lease) renewOnce() bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl/4)
	defer cancel()
	l.mu.Lock()
	rec, etag := l.rec, l.etag
	l.mu.Unlock()
	rec.Renewed = l.r.opts.now().UTC().Format(time.RFC3339Nano)
	data, _ := json.Marshal(rec)
	body, err := l.r.b.seal(data)
	if err != nil {
		return false
	}
	sent := time.Now()
	l.r.b.st.puts.Add(1)
	oi, err := l.r.b.c.PutIfMatch(ctx, l.key, bytes.NewReader(body), int64(len(body)), etag)
	if errors.Is(err, ErrObjectChanged) || errors.Is(err, ErrObjectNotFound) {
		// Either a retried request of ours landed already, or someone
		// else holds it now: look.
		stored, info, gerr := l.r.b.get(ctx, l.key, maxSmall)
		var cur leaseRec
		if gerr == nil {
			if plain, err := l.r.b.open(l.key, stored); err == nil && json.Unmarshal(plain, &cur) == nil && cur.Token == rec.Token && !cur.Released {
				oi, err = info, nil
			}
		}
		if err != nil && (gerr == nil || isNotFound(gerr)) {
			l.mu.Lock()
			if cur.Host != "" {
				l.lost = fmt.Errorf("lease %s: taken over by pid %d on %s: %w", l.r.b.objectName(l.key), cur.PID, cur.Host, ErrLeaseLost)
			} else {
				l.lost = fmt.Errorf("lease %s: removed from the remote: %w", l.r.b.objectName(l.key), ErrLeaseLost)
			}
			l.mu.Unlock()
			return false
		}
	}
	if err != nil {
		return false
	}
	l.mu.Lock()
	l.rec, l.etag = rec, oi.ETag
	l.until = sent.Add(validFor(l.ttl))
	l.mu.Unlock()
	return true
}

// Release ships what is left of the session (waiting up to the
// replicator's CloseTimeout), stops renewing and marks the lease
// released, so that another machine takes it at once. It is idempotent.
func (l *lease) Release() error {
	var err error
	l.once.Do(func() {
		if l.before != nil {
			l.before()
		}
		close(l.stop)
		<-l.done
		l.mu.Lock()
		rec, etag, lost := l.rec, l.etag, l.lost
		l.mu.Unlock()
		if lost != nil {
			return
		}
		rec.Released = true
		rec.Renewed = l.r.opts.now().UTC().Format(time.RFC3339Nano)
		data, _ := json.Marshal(rec)
		body, serr := l.r.b.seal(data)
		if serr != nil {
			err = serr
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, 5*time.Second))
		defer cancel()
		l.r.b.st.puts.Add(1)
		if _, perr := l.r.b.c.PutIfMatch(ctx, l.key, bytes.NewReader(body), int64(len(body)), etag); perr != nil && !errors.Is(perr, ErrObjectChanged) && !errors.Is(perr, ErrObjectNotFound) {
			err = fmt.Errorf("release lease %s: %w", l.r.b.objectName(l.key), perr)
		}
	})
	return err
}
