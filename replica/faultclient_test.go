package replica_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sessctl/sessctl/replica"
)

// errUnreachable is what a faultClient answers while its store is
// "down".
var errUnreachable = errors.New("the store is unreachable (injected fault)")

// faultClient wraps a real Client (the directory client of a test's
// remote) with what a network and a server do to it: an outage (every
// call fails), a server that dies after so many bytes were uploaded (the
// object being written is not stored, as with S3's single PUTs), and a
// request whose reply is lost (it reached the store, or not), after which
// the store stays unreachable. The real tests of these faults against an
// S3 server go through a proxy; this one lets them run without one.
type faultClient struct {
	replica.Client
	down   atomic.Bool
	budget atomic.Int64 // upload bytes left before the store dies; < 0: no limit

	mu      sync.Mutex
	lose    func(op, key string) bool // picks the request whose reply is lost
	forward bool                      // the lost reply's request reached the store
	fired   atomic.Bool               // it reached the store and succeeded
}

// newFaultClient wraps the directory client of the remote.
func newFaultClient(t testing.TB, remote string) *faultClient {
	t.Helper()
	c, err := replica.NewDirClient(remoteDir(remote), nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := &faultClient{Client: c}
	fc.budget.Store(-1)
	return fc
}

// loseReply makes the first request that match picks lose its reply;
// forward says whether it is carried out.
func (f *faultClient) loseReply(forward bool, match func(op, key string) bool) {
	f.mu.Lock()
	f.lose, f.forward = match, forward
	f.mu.Unlock()
}

// heal brings the store back: no outage, no byte limit, no reply lost.
func (f *faultClient) heal() {
	f.mu.Lock()
	f.lose = nil
	f.mu.Unlock()
	f.budget.Store(-1)
	f.down.Store(false)
}

// before decides on a request: an error when it fails without reaching
// the store; lost when it is the one whose reply is lost (the caller
// carries it out when forward, and answers errUnreachable).
func (f *faultClient) before(op, key string, size int64) (lost, forward bool, err error) {
	if f.down.Load() {
		return false, false, errUnreachable
	}
	f.mu.Lock()
	if f.lose != nil && f.lose(op, key) {
		f.lose = nil
		f.down.Store(true)
		f.mu.Unlock()
		return true, f.forward, nil
	}
	f.mu.Unlock()
	if size > 0 {
		if left := f.budget.Load(); left >= 0 {
			if size > left {
				f.down.Store(true)
				return false, false, errUnreachable
			}
			f.budget.Add(-size)
		}
	}
	return false, false, nil
}

func (f *faultClient) Get(ctx context.Context, key string) (io.ReadCloser, replica.ObjectInfo, error) {
	lost, fwd, err := f.before("Get", key, 0)
	if err != nil || lost {
		if fwd {
			rc, _, err := f.Client.Get(ctx, key)
			if err == nil {
				rc.Close()
			}
		}
		return nil, replica.ObjectInfo{}, errUnreachable
	}
	return f.Client.Get(ctx, key)
}

func (f *faultClient) List(ctx context.Context, prefix string) iter.Seq2[replica.ObjectInfo, error] {
	return func(yield func(replica.ObjectInfo, error) bool) {
		if lost, _, err := f.before("List", prefix, 0); err != nil || lost {
			yield(replica.ObjectInfo{}, errUnreachable)
			return
		}
		for o, err := range f.Client.List(ctx, prefix) {
			if !yield(o, err) {
				return
			}
		}
	}
}

// put runs one of the writes through the faults.
func (f *faultClient) put(op, key string, size int64, do func() (replica.ObjectInfo, error)) (replica.ObjectInfo, error) {
	lost, fwd, err := f.before(op, key, size)
	if err != nil {
		return replica.ObjectInfo{}, err
	}
	if lost {
		if fwd {
			_, err := do()
			f.fired.Store(err == nil)
		}
		return replica.ObjectInfo{}, errUnreachable
	}
	return do()
}

func (f *faultClient) Put(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	return f.put("Put", key, size, func() (replica.ObjectInfo, error) { return f.Client.Put(ctx, key, r, size) })
}

func (f *faultClient) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	return f.put("PutIfAbsent", key, size, func() (replica.ObjectInfo, error) { return f.Client.PutIfAbsent(ctx, key, r, size) })
}

func (f *faultClient) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (replica.ObjectInfo, error) {
	return f.put("PutIfMatch", key, size, func() (replica.ObjectInfo, error) { return f.Client.PutIfMatch(ctx, key, r, size, etag) })
}

func (f *faultClient) Delete(ctx context.Context, key string) error {
	_, err := f.put("Delete", key, 0, func() (replica.ObjectInfo, error) { return replica.ObjectInfo{}, f.Client.Delete(ctx, key) })
	return err
}
