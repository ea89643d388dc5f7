package migrate_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/migrate"
)

// memoryLines are lines of every kind the steps treat differently: plain
// entries (the fast path), entries that carry ids, compactions, hook
// messages, non-canonical JSON (spacing, number notation, escapes,
// repeated keys, CRLF), later headers, and lines pi drops.
var memoryLines = []string{
	`{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q %d","timestamp":1}}`,
	`{"type":"message","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"a %d"}],"usage":{"input":1.5}}}`,
	`{"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"h %d","display":true}}`,
	`{"type":"compaction","timestamp":"t","summary":"s %d","firstKeptEntryIndex":%d,"tokensBefore":10}`,
	`{"type":"compaction","timestamp":"t","summary":"s %d","firstKeptEntryIndex":1.5}`,
	`{"type":"message","id":"own%d","parentId":null,"message":{"role":"user","content":"x"}}`,
	`{"type":"model_change","timestamp":"t","provider":"p","modelId":"m%d"}`,
	`{ "type" : "message", "message" : {"role":"user","content":"spaced %d"} }`,
	`{"type":"message","message":{"role":"user","content":"\u00e9 %d","n":1.0,"e":1e2}}`,
	`{"type":"label","label":"l%d","type":"label"}`,
	`{"type":"message","message":{"role":"user","content":"crlf %d"}}` + "\r",
	`{"type":"session","id":"later%d","version":1}`,
	`{"type":"message","message":"not an object %d"}`,
	`{"type":"custom","customType":"x","data":{"1":%d,"a":[true,false,null]}}`,
	`not json %d`,
	`[%d]`,
	``,
	"   \t",
}

// memoryFile builds a session file of n random lines after a header of
// the given version (0: none).
func memoryFile(seed uint64, n, version int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	hdr := `{"type":"session","id":"s-%d","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"`
	fmt.Fprintf(&b, hdr, seed)
	if version > 0 {
		fmt.Fprintf(&b, `,"version":%d`, version)
	}
	b.WriteString("}\n")
	for i := range n {
		l := memoryLines[r.IntN(len(memoryLines))]
		switch strings.Count(l, "%d") {
		case 1:
			l = fmt.Sprintf(l, i)
		case 2:
			l = fmt.Sprintf(l, i, r.IntN(i+3))
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// checkInMemory asserts that InMemory gives the bytes Stream writes for
// data, with and without knowing which lines are canonical, and entries
// that are those lines parsed, at the positions of the lines read.
func checkInMemory(t *testing.T, data []byte, mustFit bool) {
	t.Helper()
	var want bytes.Buffer
	sres, err := migrate.Stream(context.Background(), bytes.NewReader(data), &want)
	if err != nil || !sres.Migrated {
		t.Fatalf("stream: %+v, %v", sres, err)
	}
	read := jsonl.ParseFile(data)
	pc, canon := jsonl.ParseFileCanonical(data)
	for _, c := range [][]bool{nil, canon} {
		entries := read.Entries
		if c != nil {
			entries = pc.Entries
		}
		m, err := migrate.InMemory(entries, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(m.Data, nil); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("canon known %v: in memory\n%s\nstreamed\n%s", c != nil, got, want.Bytes())
		}
		// InMemory sees only the lines that parsed: nothing is malformed.
		sres.Malformed, sres.Torn = 0, false
		if m.Size() != int64(want.Len()) || m.Result != sres {
			t.Errorf("size %d, result %+v; streamed %d bytes, %+v", m.Size(), m.Result, want.Len(), sres)
		}
		checkEntries(t, m.Entries, read.Entries, want.Bytes())
	}
	// In place, with room to grow: the same bytes and entries. Without
	// room, nothing is touched and the caller is told to use InMemory.
	for _, room := range []int{0, len(data)/4 + 4096} {
		buf := append(make([]byte, 0, len(data)+room), data...)
		p, canon := jsonl.ParseFileCanonical(buf)
		m, ok, err := migrate.InPlace(buf, p.Entries, canon)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			// A file that drops lines (malformed, blank, a CR) may move a
			// line onto bytes still to be moved: refused, like no room.
			if room > 0 && mustFit {
				t.Fatalf("no migration in place with %d bytes of room", room)
			}
			if !bytes.Equal(buf, data) || len(p.Entries) != len(pc0(data).Entries) || !sameRaw(p.Entries, pc0(data).Entries) {
				t.Fatal("a refused migration in place changed the bytes or the entries")
			}
			continue
		}
		if room == 0 && m.Size() > int64(len(data)) {
			t.Fatal("migrated in place without room")
		}
		if got := bytes.Join(m.Data, nil); len(m.Data) != 1 || !bytes.Equal(got, want.Bytes()) {
			k := 0
			for k < min(len(got), want.Len()) && got[k] == want.Bytes()[k] {
				k++
			}
			t.Fatalf("in place (room %d) differs from the stream at byte %d of %d/%d: %q, streamed %q", room, k, len(got), want.Len(),
				got[max(0, k-80):min(len(got), k+80)], want.Bytes()[max(0, k-80):min(want.Len(), k+80)])
		}
		if m.Result != sres {
			t.Errorf("in place: result %+v, streamed %+v", m.Result, sres)
		}
		checkEntries(t, m.Entries, read.Entries, want.Bytes())
	}
}

// checkEntries asserts that migrated entries are the lines of the
// migrated file out, parsed, at the positions of the lines read.
func checkEntries(t *testing.T, entries, read []jsonl.Entry, out []byte) {
	t.Helper()
	{
		m := struct{ Entries []jsonl.Entry }{entries}
		out := jsonl.ParseFile(out)
		if len(m.Entries) != len(out.Entries) {
			t.Fatalf("%d entries in memory, %d streamed", len(m.Entries), len(out.Entries))
		}
		for i, e := range m.Entries {
			o := out.Entries[i]
			o.Offset, o.Line = read[i].Offset, read[i].Line
			if e.Type != o.Type || e.ID != o.ID || e.IDKind != o.IDKind || e.ParentID != o.ParentID ||
				e.ParentKind != o.ParentKind || e.Timestamp != o.Timestamp || e.Role != o.Role ||
				!bytes.Equal(e.Message(), o.Message()) || e.Offset != o.Offset || e.Line != o.Line {
				t.Fatalf("entry %d in memory %+v, parsed from the stream %+v", i, e, o)
			}
		}
	}
}

func TestInMemoryWritesWhatStreamWrites(t *testing.T) {
	t.Parallel()
	for _, s := range migrateFixtures {
		p := jsonl.ParseFile([]byte(s))
		if len(p.Entries) == 0 || !p.Entries[0].IsHeader() || !migrate.Needed(migrate.VersionOf(&p.Entries[0])) {
			continue
		}
		checkInMemory(t, []byte(s), false)
	}
	for _, v := range []int{0, 1, 2} {
		for seed := range uint64(4) {
			data := memoryFile(seed, 300, v)
			t.Run(fmt.Sprintf("v%d-seed%d", v, seed), func(t *testing.T) {
				t.Parallel()
				checkInMemory(t, data, false)
			})
		}
	}
}

func TestInMemoryInRangesWritesWhatStreamWrites(t *testing.T) {
	// Every range rebuilds the steps' state from the lines before it: the
	// previous id, the positions of headers (a compaction may count back
	// across the cut).
	for _, parts := range []int{2, 3, 7, 64} {
		restore := migrate.SplitInMemory(0, parts)
		for _, v := range []int{0, 2} {
			for seed := range uint64(3) {
				checkInMemory(t, memoryFile(seed+10, 200, v), false)
			}
		}
		var w bytes.Buffer
		if _, err := workload.Write(&w, workload.Options{Seed: 5, Entries: 500, Version: 1}); err != nil {
			t.Fatal(err)
		}
		checkInMemory(t, w.Bytes(), true)
		restore()
	}
}

func pc0(data []byte) *jsonl.Parsed {
	p, _ := jsonl.ParseFileCanonical(data)
	return p
}

func sameRaw(a, b []jsonl.Entry) bool {
	for i := range a {
		if !bytes.Equal(a[i].Raw, b[i].Raw) || a[i].ID != b[i].ID || a[i].IDKind != b[i].IDKind {
			return false
		}
	}
	return true
}
