package engine_test

import (
	"encoding/hex"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// v7Millis returns the Unix milliseconds a version 7 UUID carries.
func v7Millis(t *testing.T, id string) int64 {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", "")[:12])
	if err != nil {
		t.Fatal(err)
	}
	var ms int64
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return ms
}

// TestSessionIDsAreUUIDv7: every new session id (Create, InMemory,
// NewSession, ForkFrom, CreateBranchedSession, ForkBranch, NewChild) is a
// version 7 UUID carrying the time it was made at, as pi 0.73.1 draws
// them (0.58.3: version 4), so ids made later sort after earlier ones.
func TestSessionIDsAreUUIDv7(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before := time.Now().UnixMilli()
	var ids []string
	check := func(what, id string) {
		t.Helper()
		if !uuidV7.MatchString(id) {
			t.Errorf("%s: session id %q is not a version 7 UUID", what, id)
			return
		}
		if ms := v7Millis(t, id); ms < before || ms > time.Now().UnixMilli() {
			t.Errorf("%s: id %s carries %d ms, not a time since the test began (%d)", what, id, ms, before)
		}
		ids = append(ids, id)
		time.Sleep(2 * time.Millisecond) // the next id is of a later millisecond
	}
	o := engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}
	s, err := openStore(t, o).Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check("Create", s.SessionID())
	at := time.Now()
	must[string](t)(s.AppendMessage(message.NewUser("q", at)))
	a := must[string](t)(s.AppendMessage(reply(at)))
	check("InMemory", inMemory(t, "/w", o).SessionID())
	st := openStore(t, o)
	f, err := st.Fork(t.Context(), s.SessionFile(), engine.ForkOptions{Cwd: "/w", Dir: filepath.Join(dir, "fork")})
	if err != nil {
		t.Fatal(err)
	}
	check("Fork", f.SessionID())
	fb, err := st.Fork(t.Context(), f.SessionFile(), engine.ForkOptions{At: a, Dir: filepath.Join(dir, "fb")})
	if err != nil {
		t.Fatal(err)
	}
	check("Fork at", fb.SessionID())
	fb.Close()
	c, err := f.NewChild(t.Context(), engine.ChildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("NewChild", c.SessionID())
	c.Close()
	if _, err := f.CreateBranchedSession(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	check("CreateBranchedSession", f.SessionID())
	if _, err := f.NewSession(t.Context(), engine.NewSessionOptions{}); err != nil {
		t.Fatal(err)
	}
	check("NewSession", f.SessionID())
	f.Close()
	if !slices.IsSorted(ids) {
		t.Errorf("ids made one after another do not sort in time order: %v", ids)
	}
}
