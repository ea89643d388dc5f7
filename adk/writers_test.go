package adk

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"google.golang.org/adk/v2/session"
)

// TestWritersHeldAndBounded: a Service holds the writer of each session it
// wrote across calls (another Service, as another process would, waits
// for it and gives up when its context ends), releases it on Delete,
// Release and Close, and holds no more than MaxWriters.
func TestWritersHeldAndBounded(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a := newTestService(t, dir)
	a.o.MaxWriters = 2
	b := newTestService(t, dir)
	var sess []session.Session
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		c, err := a.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id})
		if err != nil {
			t.Fatal(err)
		}
		sess = append(sess, c.Session)
	}
	appendB := func(i int) error {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		return b.AppendEvent(ctx, sess[i], &session.Event{ID: "b", Author: "user"})
	}
	// s4 and s3 are held by a.
	for _, i := range []int{3, 2} {
		if err := appendB(i); !errors.Is(err, engine.ErrLocked) {
			t.Errorf("append to %s held by another service: %v, want ErrLocked", sess[i].ID(), err)
		}
	}
	// s1 and s2 were the least recently used past MaxWriters: released.
	for _, i := range []int{0, 1} {
		if err := appendB(i); err != nil {
			t.Errorf("append to %s released by another service: %v", sess[i].ID(), err)
		}
	}
	if err := a.Release("app", "u", "s3"); err != nil {
		t.Fatal(err)
	}
	if err := appendB(2); err != nil {
		t.Errorf("append to s3 after Release: %v", err)
	}
	if err := a.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s4"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s4"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("get deleted s4: %v, want ErrNotFound", err)
	}
	// b now holds s1..s3; a's Close released everything it held, and
	// b's Close lets a write again.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendEvent(ctx, sess[0], &session.Event{ID: "a", Author: "user"}); err != nil {
		t.Errorf("append after the other service closed: %v", err)
	}
	got, err := a.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n != 2 {
		t.Errorf("s1 has %d events, want 2", n)
	}
}

// TestReleaseIdle: with ReleaseIdle a Service lets go of a session's
// writer once it is idle, so another process's append, which waits for
// the lock, goes through while the first Service stays open.
func TestReleaseIdle(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a := newTestService(t, dir)
	a.o.ReleaseIdle = 20 * time.Millisecond
	b := newTestService(t, dir)
	c, err := a.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []*Service{a, b, a, b} {
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := s.AppendEvent(wait, c.Session, &session.Event{ID: fmt.Sprint("e", i), Author: "user"})
		cancel()
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if s == b {
			// b holds its writer until Release (no ReleaseIdle).
			if err := b.Release("app", "u", "s1"); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := b.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n != 4 {
		t.Errorf("%d events, want 4", n)
	}
}
