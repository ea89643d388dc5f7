package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/lock"
)

// Another process (pi takes no lock) appends to a session file beside a
// sessctl writer. These tests play that process with a second descriptor
// opened O_APPEND in this process, writing lines in pieces as a large
// write is seen by readers.

// otherWriter opens p for appending, as pi's appendFileSync does.
func otherWriter(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustWrite(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// fileEntries parses p and returns its entries (header included) and tail.
func fileLines(t *testing.T, p string) ([]jsonl.Entry, jsonl.Tail) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	parsed := jsonl.ParseFile(data)
	if len(parsed.Malformed) > 0 {
		t.Errorf("%s has malformed lines: %+v\n%s", p, parsed.Malformed, data)
	}
	return parsed.Entries, parsed.Tail
}

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finding the processes that hold a file open needs Linux's /proc")
	}
}

// A session file grew by complete lines after the open: the write indexes
// them first, and its entry hangs from the file's last entry, as after a
// reload; a label beside a running pi does not pull pi's branch away from
// its latest messages.
func TestWriteReadsLinesAppendedSinceOpen(t *testing.T) {
	t.Parallel()
	for _, perAppend := range []bool{false, true} {
		name := "before the first write"
		if perAppend {
			name = "between two writes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := writeSession(t, msgLine("a1", "", `"one"`))
			// SyncEach (the default) checks before every write; SyncNone
			// before the first and then every 100 ms.
			s, err := engine.OpenFile(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			l := "mine"
			if perAppend {
				if _, err := s.AppendLabelChange("a1", l); err != nil {
					t.Fatal(err)
				}
			}
			w := otherWriter(t, p)
			mustWrite(t, w, msgLine("p1", "a1", `"from pi"`)+msgLine("p2", "p1", `"from pi again"`))
			id, err := s.AppendLabelChange("a1", l)
			if err != nil {
				t.Fatal(err)
			}
			e, ok := s.Entry(id)
			if !ok || e.ParentID != "p2" {
				t.Errorf("the label hangs from %q, want the file's last entry p2", e.ParentID)
			}
			got, tail := fileLines(t, p)
			var ids []string
			for _, e := range got[1:] {
				ids = append(ids, e.ID)
			}
			want := "a1,p1,p2," + id
			if perAppend {
				want = "a1," + s.Entries()[1].ID + ",p1,p2," + id
			}
			if strings.Join(ids, ",") != want || tail != jsonl.TailClean {
				t.Errorf("file holds %v (tail %d), want %s", ids, tail, want)
			}
			if n := len(s.Entries()); n != len(ids) {
				t.Errorf("the session indexes %d entries, the file holds %d", n, len(ids))
			}
		})
	}
}

// abandonedWait is the TornWait for tests of a line nobody is writing any
// more. On Linux it is long: /proc shows that no process holds the file
// open for writing, so an abandoned line must not be waited for at all.
// Elsewhere nothing shows that, and a line counts as abandoned once it
// stayed unchanged for TornWait, so it is short.
func abandonedWait() time.Duration {
	if runtime.GOOS == "linux" {
		return time.Hour
	}
	return 100 * time.Millisecond
}

// A last line that another process is still writing is waited for, not
// cut: when it is complete it is read like any other entry.
func TestWriteWaitsForALineBeingWritten(t *testing.T) {
	needProc(t)
	p := writeSession(t, msgLine("a1", "", `"one"`))
	w := otherWriter(t, p)
	line := msgLine("p1", "a1", `"`+strings.Repeat("x", 1<<20)+`"`)
	half := len(line) / 2
	mustWrite(t, w, line[:half])
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone, TornWait: time.Minute}).Open(context.Background(), p, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type result struct {
		id  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		l := "x"
		id, err := s.AppendLabelChange("a1", l)
		done <- result{id, err}
	}()
	// Finish the line once the session has its own descriptor on the
	// file, which it opens just before it looks at the last line.
	waitForOtherWriter(t, p, int(w.Fd()))
	mustWrite(t, w, line[half:])
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	got, tail := fileLines(t, p)
	if len(got) != 4 || got[2].ID != "p1" || got[3].ID != r.id || tail != jsonl.TailClean {
		t.Fatalf("file holds %d entries (tail %d), want header, a1, p1 and the label", len(got), tail)
	}
	if got[3].ParentID != "p1" {
		t.Errorf("the label hangs from %s, want p1", got[3].ParentID)
	}
	if rec := s.Recovery(); rec.TornBytes != 0 {
		t.Errorf("recovery %+v: the line being written was cut", rec)
	}
	if q, _ := filepath.Glob(p + ".torn-*"); len(q) != 0 {
		t.Errorf("quarantine files %v", q)
	}
}

// waitForOtherWriter waits until a descriptor other than skip holds p
// open for writing.
func waitForOtherWriter(t *testing.T, p string, skip int) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if ws, _ := lock.FileWriters(st, skip); len(ws) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the session never opened the file")
		}
		time.Sleep(time.Millisecond)
	}
}

// A last line that stays unfinished while another process holds the file
// open for writing fails the write with ErrBusy, naming the process, and
// the file is left alone.
func TestWriteRefusesToCutALineAnotherWriterHolds(t *testing.T) {
	needProc(t)
	p := writeSession(t, msgLine("a1", "", `"one"`))
	w := otherWriter(t, p)
	mustWrite(t, w, `{"type":"message","id":"p1","parentId":"a1","mess`)
	before, _ := os.ReadFile(p)
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone, TornWait: 50 * time.Millisecond}).Open(context.Background(), p, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := "x"
	_, err = s.AppendLabelChange("a1", l)
	var be *engine.BusyError
	if !errors.Is(err, engine.ErrBusy) || !errors.As(err, &be) {
		t.Fatalf("append: %v, want ErrBusy", err)
	}
	me := "pid " + strconv.Itoa(os.Getpid())
	if len(be.Writers) != 1 || be.Writers[0].FD != int(w.Fd()) || !strings.Contains(err.Error(), me) || !strings.Contains(err.Error(), p) {
		t.Errorf("error %q, writers %+v: want it to name %s, fd %d, and the file", err, be.Writers, me, w.Fd())
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Errorf("the file changed:\n%s", after)
	}
	if q, _ := filepath.Glob(p + ".torn-*"); len(q) != 0 {
		t.Errorf("quarantine files %v", q)
	}
	// Once the other writer is gone, its fragment is abandoned and cut.
	w.Close()
	if _, err := s.AppendLabelChange("a1", l); err != nil {
		t.Fatalf("append after the writer closed: %v", err)
	}
	if rec := s.Recovery(); rec.TornBytes == 0 {
		t.Errorf("recovery %+v, want the abandoned fragment cut", rec)
	}
	if _, tail := fileLines(t, p); tail != jsonl.TailClean {
		t.Errorf("tail %d", tail)
	}
}

// An unfinished last line that no process holds open for writing (its
// writer was killed) is quarantined and cut at once; a reader holding the
// file open is not a writer.
func TestWriteCutsAnAbandonedLine(t *testing.T) {
	t.Parallel()
	frag := `{"type":"message","id":"p1","parentId":"a1","mess`
	for _, reader := range []bool{false, true} {
		name := "nobody holds the file"
		if reader {
			name = "a reader holds the file"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if reader {
				needProc(t)
			}
			p := writeSession(t, msgLine("a1", "", `"one"`)+frag)
			if reader {
				r, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
			}
			s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone, TornWait: abandonedWait()}).Open(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id, err := s.AppendSessionInfo("n")
			if err != nil {
				t.Fatal(err)
			}
			rec := s.Recovery()
			q, _ := os.ReadFile(rec.Quarantine)
			if rec.TornBytes != len(frag) || string(q) != frag {
				t.Errorf("recovery %+v, quarantine %q: want the fragment kept", rec, q)
			}
			got, tail := fileLines(t, p)
			if len(got) != 3 || got[2].ID != id || got[2].ParentID != "a1" || tail != jsonl.TailClean {
				t.Errorf("file holds %d entries, tail %d", len(got), tail)
			}
		})
	}
}

// A fragment another process leaves between two writes of a session (it
// was killed in the middle of a line) is cut before the next write, which
// would otherwise be glued onto it and lost.
func TestWriteAfterAnotherWriterWasKilledMidLine(t *testing.T) {
	t.Parallel()
	p := writeSession(t, msgLine("a1", "", `"one"`))
	s, err := openStore(t, engine.StoreOptions{TornWait: abandonedWait()}).Open(context.Background(), p, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendSessionInfo("first"); err != nil {
		t.Fatal(err)
	}
	w := otherWriter(t, p)
	mustWrite(t, w, msgLine("p1", "a1", `"complete"`)+`{"type":"message","id":"p2","par`)
	w.Close()
	id, err := s.AppendSessionInfo("second")
	if err != nil {
		t.Fatal(err)
	}
	got, tail := fileLines(t, p)
	if n := len(got); n != 5 || got[3].ID != "p1" || got[4].ID != id || got[4].ParentID != "p1" || tail != jsonl.TailClean {
		t.Fatalf("file holds %d entries (tail %d), want header, a1, info, p1 and the new info after p1", n, tail)
	}
	if s.Recovery().TornBytes == 0 {
		t.Errorf("recovery %+v, want the fragment cut", s.Recovery())
	}
}

// A complete last line without its newline, which another process may be
// about to end, gets its newline through the O_APPEND descriptor: at worst
// that leaves a blank line, never a glued one.
func TestWriteEndsACompleteLastLine(t *testing.T) {
	t.Parallel()
	p := writeSession(t, strings.TrimSuffix(msgLine("a1", "", `"one"`), "\n"))
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), p, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The other writer ends its line after the open and adds another.
	w := otherWriter(t, p)
	mustWrite(t, w, "\n"+msgLine("p1", "a1", `"two"`))
	id, err := s.AppendSessionInfo("n")
	if err != nil {
		t.Fatal(err)
	}
	got, tail := fileLines(t, p)
	if len(got) != 4 || got[1].ID != "a1" || got[2].ID != "p1" || got[3].ID != id || got[3].ParentID != "p1" || tail != jsonl.TailClean {
		t.Fatalf("file holds %d entries (tail %d)", len(got), tail)
	}
	if n := len(s.Entries()); n != 3 {
		t.Errorf("the session indexes %d entries, want 3 (a1 once)", n)
	}
}

// The Linux scan finds a descriptor opened for writing, skips the ones it
// is told to and read-only ones.
func TestFileWriters(t *testing.T) {
	needProc(t)
	p := writeSession(t, "")
	st, _ := os.Stat(p)
	if ws, known := lock.FileWriters(st); !known || len(ws) != 0 {
		t.Fatalf("FileWriters of a closed file = %v, %v", ws, known)
	}
	r, _ := os.Open(p)
	defer r.Close()
	if ws, _ := lock.FileWriters(st); len(ws) != 0 {
		t.Errorf("a reader counts as a writer: %v", ws)
	}
	w, _ := os.OpenFile(p, os.O_RDWR, 0)
	defer w.Close()
	ws, _ := lock.FileWriters(st)
	if len(ws) != 1 || ws[0].PID != os.Getpid() || ws[0].FD != int(w.Fd()) || ws[0].Command == "" {
		t.Errorf("FileWriters = %+v, want this process's fd %d", ws, w.Fd())
	}
	if ws, _ := lock.FileWriters(st, int(w.Fd())); len(ws) != 0 {
		t.Errorf("a skipped descriptor was listed: %v", ws)
	}
}
