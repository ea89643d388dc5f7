package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search/internal/textindex"
)

func writeWorkload(t *testing.T, p string, seed uint64, day int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	o := workload.Options{Seed: seed, Entries: 8 + int(seed%12), ToolResultMin: 50, ToolResultMax: 400,
		ImageEvery: -1, Cwd: "/home/dev/p", Start: time.Date(2026, 3, 1+day%20, 9, 0, 0, 0, time.UTC)}
	if _, err := workload.WriteFile(p+".new", o); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
}

func readOwnStateAt(t *testing.T, x *Index) *ownState {
	t.Helper()
	st, err := readOwnState(x.fsys(), filepath.Join(x.ownDir(), ownStateName))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOwnStateLog: after many updates (appends, replaced, removed and
// new files), the state read from the base and its log is the state the
// watched Index keeps in memory, the answers are a fresh build's, and
// the log is compacted into a new base now and then.
func TestOwnStateLog(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	r := rand.New(rand.NewPCG(7, 3))
	var paths []string
	next := 0
	newFile := func() {
		p := filepath.Join(root, "--p--", fmt.Sprintf("s%03d.jsonl", next))
		writeWorkload(t, p, uint64(next+1), next)
		paths = append(paths, p)
		next++
	}
	for range 16 {
		newFile()
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	defer func(n int64) { ownLogMin = n }(ownLogMin)
	ownLogMin = 8 << 10
	x := openIndex(t, Options{Engine: EngineOwn, Watch: true})
	searchAll(t, x, Query{Text: "zebra", Stores: stores})
	gens := map[uint64]bool{readOwnStateAt(t, x).Gen: true}
	logged := 0
	var words []string
	for round := range 60 {
		switch k := r.IntN(10); {
		case k < 6 || len(paths) < 4: // the common case
			for range 1 + r.IntN(3) {
				w := fmt.Sprintf("quagga%d", round)
				words = append(words, w)
				appendLines(t, paths[r.IntN(len(paths))], userLine(fmt.Sprintf("a%d", r.Uint64()), "", "2026-04-01T10:00:00.000Z", w+" zebra"))
			}
		case k < 8:
			i := r.IntN(len(paths))
			writeWorkload(t, paths[i], r.Uint64N(1000)+100, r.IntN(20))
		case k < 9:
			i := r.IntN(len(paths))
			if err := os.Remove(paths[i]); err != nil {
				t.Fatal(err)
			}
			paths = append(paths[:i], paths[i+1:]...)
		default:
			newFile()
		}
		if _, err := os.Stat(filepath.Join(x.ownDir(), ownLogName)); err == nil {
			logged++
		}
		got := searchAll(t, x, Query{Text: "zebra", Stores: stores})
		if err := x.waitOwnMerge(); err != nil { // it saves the state too
			t.Fatal(err)
		}
		if x.stCache == nil {
			t.Fatalf("round %d: no state kept", round)
		}
		disk := readOwnStateAt(t, x)
		gens[disk.Gen] = true
		if diff := cmp.Diff(x.stCache.st, disk, cmpopts.IgnoreUnexported(ownState{})); diff != "" {
			t.Fatalf("round %d: state on disk (+) differs from the one in memory (-):\n%s", round, diff)
		}
		used := map[string]bool{}
		for _, f := range disk.Files {
			used[f.Session] = true
			if disk.Sessions[f.Session] == nil {
				t.Fatalf("round %d: session %q of a file is not in the state", round, f.Session)
			}
		}
		if len(used) != len(disk.Sessions) {
			t.Fatalf("round %d: %d sessions in the state, %d used by its files", round, len(disk.Sessions), len(used))
		}
		if round%15 == 14 {
			fresh := openIndex(t, Options{Engine: EngineOwn})
			for _, q := range []string{"zebra", words[r.IntN(len(words))], "the", "error OR file"} {
				q := Query{Text: q, Stores: stores}
				if diff := cmp.Diff(searchAll(t, fresh, q), searchAll(t, x, q)); diff != "" {
					t.Errorf("round %d: %q: fresh build (-) and updated index (+) differ:\n%s", round, q.Text, diff)
				}
			}
			if len(got) == 0 {
				t.Errorf("round %d: no zebra", round)
			}
		}
	}
	if logged < 10 {
		t.Errorf("the log was there in %d of 60 rounds: updates do not append to it", logged)
	}
	t.Logf("log in %d rounds, %d bases", logged, len(gens))
	if len(gens) < 3 {
		t.Errorf("%d bases in 60 updates: the log is not compacted", len(gens))
	}
}

// TestOwnStateLogTorn: a torn or damaged record of the log makes the
// state untrusted; the next search builds the index again and finds what
// the lost record's update indexed.
func TestOwnStateLogTorn(t *testing.T) {
	for _, damage := range []string{"torn", "flipped", "header"} {
		t.Run(damage, func(t *testing.T) {
			root, s1, _ := fixtureStore(t)
			stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
			x := openIndex(t, Options{Engine: EngineOwn})
			searchAll(t, x, Query{Text: "flaky", Stores: stores})
			appendLines(t, s1, userLine("zz1", "", "2026-03-01T10:00:00.000Z", "flaky quagga"))
			if h := searchAll(t, x, Query{Text: "quagga", Stores: stores}); len(h) != 1 {
				t.Fatalf("quagga: %v", h)
			}
			logPath := filepath.Join(x.ownDir(), ownLogName)
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatalf("no log after an append: %v", err)
			}
			t.Logf("log of one append: %d bytes", len(data))
			switch damage {
			case "torn":
				data = data[:len(data)-1-len(data)%3]
			case "flipped":
				data[len(data)-5] ^= 0x10
			case "header":
				data[9] ^= 1 // the Gen: its checksum no longer matches
			}
			if err := os.WriteFile(logPath, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := readOwnState(x.fsys(), filepath.Join(x.ownDir(), ownStateName)); !errors.Is(err, textindex.ErrCorrupt) {
				t.Fatalf("state with a %s log: %v, want ErrCorrupt", damage, err)
			}
			y := openIndex(t, Options{Engine: EngineOwn, Dir: x.dir})
			if h := searchAll(t, y, Query{Text: "quagga", Stores: stores}); len(h) != 1 {
				t.Errorf("after a %s log: quagga %v, want the appended line", damage, h)
			}
			if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after a %s log: the index was not built again (log: %v)", damage, err)
			}
		})
	}
}

// TestOwnStateLogStale: a log of an older base (a crash between a
// compaction's rename and the log's removal) is ignored.
func TestOwnStateLogStale(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{Engine: EngineOwn})
	searchAll(t, x, Query{Text: "flaky", Stores: stores})
	want := readOwnStateAt(t, x)
	var h [ownLogHeader]byte
	copy(h[:], ownLogMagic)
	binary.LittleEndian.PutUint32(h[4:], ownVersion)
	binary.LittleEndian.PutUint64(h[8:], want.Gen-1)
	binary.LittleEndian.PutUint32(h[16:], crcOf(h[:16]))
	rec, err := ownLogRecord(&ownDelta{MaxID: 1 << 40, Gone: []string{s1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(x.ownDir(), ownLogName), append(h[:], rec...), 0o600); err != nil {
		t.Fatal(err)
	}
	got := readOwnStateAt(t, x)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(ownState{})); diff != "" {
		t.Errorf("a stale log changed the state:\n%s", diff)
	}
	appendLines(t, s1, userLine("zz1", "", "2026-03-01T10:00:00.000Z", "flaky quagga"))
	if h := searchAll(t, x, Query{Text: "quagga", Stores: stores}); len(h) != 1 {
		t.Errorf("quagga after a stale log: %v", h)
	}
	if st := readOwnStateAt(t, x); st.Files[s1] == nil || st.MaxID != readOwnStateAt(t, x).MaxID || st.MaxID >= 1<<40 {
		t.Errorf("the update after a stale log: %+v", st.Files[s1])
	}
}

// TestForgetUnused: after an update, the sessions it touched that no
// file refers to are forgotten, the others kept; an update whose touched
// files all still refer to their sessions (appends) counts no file's
// session.
func TestForgetUnused(t *testing.T) {
	st := newOwnState()
	st.Files = map[string]*ownFile{"a": {No: 1, Session: "s1"}, "b": {No: 2, Session: "s2"}, "c": {No: 3, Session: "s2"}}
	for _, s := range []string{"s1", "s2", "s3"} {
		st.Sessions[s] = &ownSession{ID: s}
	}
	st.touch("a", "s1") // appended to
	st.forgetUnused()
	if len(st.Sessions) != 3 {
		t.Errorf("after an append: sessions %v, want all three", slices.Sorted(maps.Keys(st.Sessions)))
	}
	if st.saved.refs != nil {
		t.Error("an append counted every file's session")
	}
	// b is gone (c still refers to s2) and s3 was touched with no file.
	delete(st.Files, "b")
	st.touch("b", "s2")
	st.touchSession("s3")
	st.forgetUnused()
	if got := slices.Sorted(maps.Keys(st.Sessions)); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("after b went and s3 was touched: sessions %v, want [s1 s2]", got)
	}
	// c goes too: s2 has no file left.
	st.saved.files, st.saved.sessions = nil, nil
	delete(st.Files, "c")
	st.ref("s2", -1)
	st.touch("c", "s2")
	st.forgetUnused()
	if got := slices.Sorted(maps.Keys(st.Sessions)); !slices.Equal(got, []string{"s1"}) {
		t.Errorf("after c went: sessions %v, want [s1]", got)
	}
}
