package search

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sessctl/sessctl/layout"
)

func randOwnState(r *rand.Rand, nFiles int) *ownState {
	st := newOwnState()
	st.MaxID, st.NextFile, st.Dead, st.Gen = r.Uint64(), r.Uint32(), r.Uint64(), math.MaxUint64
	for range r.IntN(30) {
		st.Times = append(st.Times, []int64{math.MinInt64, math.MaxInt64, r.Int64(), -r.Int64()}[r.IntN(4)])
	}
	if r.IntN(2) == 0 {
		st.Stamps = map[string]ownStamp{"docs": {Size: r.Int64(), Mtime: -1, Ctime: math.MinInt64, ID: math.MaxUint64}, "text/é.seg": {}}
	}
	big := []int64{0, 1, -1, math.MaxInt64, math.MinInt64}
	for i := range nFiles {
		p := fmt.Sprintf("/home/dév/%d/--p%d--/s%03d✓.jsonl", r.IntN(3), r.IntN(4), i)
		sess := p
		if i%3 == 1 { // AgentUse: the session directory
			sess = fmt.Sprintf("/home/dév/au/%d", r.IntN(5))
			p = sess + fmt.Sprintf("/part%d.json", i)
		} else if i%7 == 2 {
			sess = "not a key"
		}
		st.Files[p] = &ownFile{No: r.Uint32(), Session: sess, Kind: fileKind(r.IntN(256)), Size: big[r.IntN(5)], Mtime: r.Int64(),
			Ino: r.Uint64(), Ctime: big[r.IntN(5)], End: r.Int64(), TailOff: big[r.IntN(5)], TailCRC: math.MaxUint32, Docs: r.Uint64()}
		if sess != "not a key" {
			st.Sessions[sess] = &ownSession{Format: layout.Format(r.IntN(3)), ID: fmt.Sprint(r.Uint64()), Name: []string{"", "n", "ñ"}[r.IntN(3)], Cwd: fmt.Sprintf("/cwd/%d", r.IntN(3))}
		}
	}
	return st
}

// TestOwnStateCodec: random states and deltas come back field by field.
func TestOwnStateCodec(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	opts := []cmp.Option{cmpopts.IgnoreUnexported(ownState{}), cmpopts.EquateEmpty()}
	for n := range 40 {
		st := randOwnState(r, n*3)
		st.Version = ownVersion
		got, err := decodeOwnState(encodeOwnState(nil, st))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(st, got, opts...); diff != "" {
			t.Fatalf("state %d:\n%s", n, diff)
		}
		d := &ownDelta{MaxID: st.MaxID, NextFile: st.NextFile, Dead: st.Dead, TimesFrom: r.IntN(5) - 1, Times: st.Times,
			Stamps: st.Stamps, Files: st.Files, Sessions: st.Sessions}
		for range r.IntN(4) {
			d.Gone = append(d.Gone, fmt.Sprintf("/gone/%d", r.Int()))
			d.GoneSessions = append(d.GoneSessions, fmt.Sprintf("/gone/s%d", r.Int()))
		}
		slices.Sort(d.Gone)
		slices.Sort(d.GoneSessions)
		gd, err := decodeOwnDelta(encodeOwnDelta(nil, d))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, gd, opts...); diff != "" {
			t.Fatalf("delta %d:\n%s", n, diff)
		}
	}
}

// TestOwnStateCodecDamage: every truncation and single-byte changes of
// an encoded state are errors, never a panic.
func TestOwnStateCodecDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	st := randOwnState(r, 30)
	st.Version = ownVersion
	b := encodeOwnState(nil, st)
	for n := range len(b) {
		if _, err := decodeOwnState(b[:n]); !errors.Is(err, errOwnCodec) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	bad := 0
	for range 3000 {
		c := slices.Clone(b)
		c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
		if _, err := decodeOwnState(c); err != nil {
			if !errors.Is(err, errOwnCodec) {
				t.Fatal(err)
			}
			bad++
		}
	}
	if bad == 0 {
		t.Error("no corruption was noticed")
	}
	d := encodeOwnDelta(nil, &ownDelta{Files: st.Files, Sessions: st.Sessions, Gone: []string{"x"}})
	for n := range len(d) {
		if _, err := decodeOwnDelta(d[:n]); !errors.Is(err, errOwnCodec) {
			t.Fatalf("delta truncated to %d: %v", n, err)
		}
	}
}

func FuzzOwnStateDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 4 {
		st := randOwnState(r, n*4)
		st.Version = ownVersion
		f.Add(encodeOwnState(nil, st))
	}
	f.Add([]byte(ownStateMagic + "\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeOwnState(b)
		if err != nil {
			return
		}
		if _, err := decodeOwnState(encodeOwnState(nil, st)); err != nil {
			t.Fatalf("re-encoded state: %v", err)
		}
	})
}

func benchOwnState() *ownState {
	st := newOwnState()
	st.MaxID, st.NextFile, st.Gen = 10000*ownTimeBlock, 50001, 1<<62
	for i := range 10000 {
		st.Times = append(st.Times, 1772355600000+int64(i)*60000)
	}
	st.Stamps = map[string]ownStamp{"docs": {Size: 1 << 30, Mtime: 1 << 60, Ctime: 1 << 60, ID: 99}}
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 50000 {
		cwd := fmt.Sprintf("/home/dev/proj%d", i%40)
		id := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
		p := fmt.Sprintf("/root/.cache/sessctl/bench/store/agent/sessions/--home-dev-proj%d--/2026-03-01T09-00-00-000Z_%s.jsonl", i%40, id)
		sz := r.Int64N(1 << 20)
		mt := 1772355600000000000 + r.Int64N(1<<40)
		st.Files[p] = &ownFile{No: uint32(i + 1), Session: p, Kind: fileJSONL, Size: sz, Mtime: mt, Ino: r.Uint64N(1 << 30),
			Ctime: mt, End: sz, TailOff: sz - 300, TailCRC: r.Uint32(), Docs: 51}
		st.Sessions[p] = &ownSession{Format: layout.FormatJSONL, ID: id, Cwd: cwd}
	}
	return st
}

// BenchmarkOwnStateDecode: the 50,000-file state of a pi store, decoded
// as gob (the old encoding) and as the binary one.
func BenchmarkOwnStateDecode(b *testing.B) {
	st := benchOwnState()
	b.Run("gob", func(b *testing.B) {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(st); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			var got ownState
			if err := gob.NewDecoder(bytes.NewReader(buf.Bytes())).Decode(&got); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	})
	b.Run("binary", func(b *testing.B) {
		enc := encodeOwnState(nil, st)
		for b.Loop() {
			if _, err := decodeOwnState(enc); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(enc)), "bytes")
	})
}
