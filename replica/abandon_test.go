package replica_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/replica"
)

// holdPuts is a Client whose uploads of data objects hold until their
// context ends (or the test releases them), counting those running.
type holdPuts struct {
	replica.Client
	running atomic.Int64
	once    sync.Once
	started chan struct{} // closed when the first data upload begins
	release chan struct{}
}

func (h *holdPuts) Put(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	if !strings.HasPrefix(key, "d/") {
		return h.Client.Put(ctx, key, r, size)
	}
	h.running.Add(1)
	defer h.running.Add(-1)
	h.once.Do(func() { close(h.started) })
	select {
	case <-ctx.Done():
		return replica.ObjectInfo{}, ctx.Err()
	case <-h.release:
		return replica.ObjectInfo{}, errors.New("released by the test")
	}
}

// TestPushLeavesNoUploadBehind: a push that fails while a segment is
// being uploaded in the background (here its transform fails on a later
// line) cancels that upload and waits for it: nothing of the push runs
// after it returned.
func TestPushLeavesNoUploadBehind(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.newSession(t, "/r/x", 200)
	c, err := replica.NewDirClient(remoteDir(remote), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &holdPuts{Client: c, started: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) })
	a.opts.Client = h
	a.opts.SegmentSize = 2048
	a.opts.InlineMax = -1
	var seen int
	a.opts.Transform = func(line []byte) ([]byte, error) {
		// Past two segments' worth of lines the first one is uploading:
		// fail once it has begun.
		if seen += len(line) + 1; seen > 2*a.opts.SegmentSize {
			select {
			case <-h.started:
			case <-time.After(10 * time.Second):
				t.Error("no segment upload began")
			}
			return nil, errors.New("cannot redact this line")
		}
		return line, nil
	}
	r, err := replica.Open(a.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Push(context.Background())
	if n := h.running.Load(); n != 0 {
		t.Errorf("%d segment uploads still running after the push returned", n)
	}
	if err == nil && (len(rep.Sessions) != 1 || rep.Sessions[0].Err == nil) {
		t.Errorf("the push did not fail: %+v", rep)
	}
}
