package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/lock"
)

// TestLockStatus checks who's words for an unlocked session with a stale
// record, a lock held with an owner record, one without, the fallback
// lock, and the JSON's holder.
func TestLockStatus(t *testing.T) {
	t.Parallel()
	owner := &lock.Owner{PID: 42, Host: "box", User: "me", Command: "pi", Mode: "write", Since: time.Now().Add(-time.Minute)}
	for _, c := range []struct {
		st   lock.Status
		want []string
	}{
		{lock.Status{Owner: owner, Stale: true, Reason: "pid 42 is gone"}, []string{"/s.jsonl: not locked\n", "(a stale owner record remains: pid 42 is gone)"}},
		{lock.Status{Locked: true}, []string{"/s.jsonl: locked by a process that left no owner record\n"}},
		{lock.Status{Locked: true, Owner: owner, Fallback: true}, []string{"/s.jsonl: locked by pid 42 (pi, user me) on box since ", "mode write\n",
			"(exclusive-create fallback lock /s.jsonl.lock.excl: this filesystem has no working flock)"}},
	} {
		var b strings.Builder
		if err := LockStatus(&b, "/s.jsonl", "/s.jsonl.lock", c.st); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v:\n%s\nlacks %q", c.st, b.String(), w)
			}
		}
	}
	var j struct {
		Locked bool
		Holder *struct{ PID int }
	}
	if err := json.Unmarshal(LockStatusJSON("/s.jsonl", "/s.jsonl.lock", lock.Status{Locked: true, Owner: owner}), &j); err != nil || !j.Locked || j.Holder == nil || j.Holder.PID != 42 {
		t.Errorf("JSON: %+v, %v", j, err)
	}
	if err := json.Unmarshal(LockStatusJSON("/s.jsonl", "/s.jsonl.lock", lock.Status{}), &j); err != nil || j.Holder != nil {
		t.Errorf("JSON without holder: %+v, %v", j, err)
	}
}
