package adk

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/adk/v2/session"
)

// TestSharedStateConcurrent: app: and user: deltas appended at once by
// many goroutines of two Services (two processes' worth of writers of the
// shared state files, each merging under the file's lock) lose no key,
// and a new session of the user, from a third Service, sees them all.
func TestSharedStateConcurrent(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	svcs := []*Service{newTestService(t, dir), newTestService(t, dir)}
	const perService = 12
	// The sessions first (Create takes a lock of the user's), then every
	// append at once.
	sessions := make([][]session.Session, len(svcs))
	for si, s := range svcs {
		for range perService {
			c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u"})
			if err != nil {
				t.Fatal(err)
			}
			sessions[si] = append(sessions[si], c.Session)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 2*perService)
	for si, s := range svcs {
		for g := range perService {
			wg.Go(func() {
				<-start
				k := fmt.Sprintf("s%d-g%d", si, g)
				errs <- s.AppendEvent(ctx, sessions[si][g], &session.Event{
					ID: k, Author: "user",
					Actions: session.EventActions{StateDelta: map[string]any{"app:" + k: float64(g), "user:" + k: k, "temp:" + k: 1}},
				})
			})
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := newTestService(t, dir).Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]any{}
	for k, v := range c.Session.State().All() {
		st[k] = v
	}
	for si := range svcs {
		for g := range perService {
			k := fmt.Sprintf("s%d-g%d", si, g)
			if st["app:"+k] != float64(g) || st["user:"+k] != k {
				t.Errorf("key %s lost: app %v, user %v", k, st["app:"+k], st["user:"+k])
			}
			if _, ok := st["temp:"+k]; ok {
				t.Errorf("temp:%s kept", k)
			}
		}
	}
	if len(st) != 2*2*perService {
		t.Errorf("state has %d keys, want %d", len(st), 2*2*perService)
	}
}
