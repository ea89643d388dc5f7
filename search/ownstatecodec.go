package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/sessctl/sessctl/layout"
)

// The own state's binary encoding (ownVersion 4), the base's payload
// after its CRC-32C and each log record's:
//
//	state: "SXOS", uvarint Version, MaxID, NextFile, Dead, Gen; times;
//	       stamps; keys
//	delta: uvarint MaxID, NextFile, Dead; varint TimesFrom; times;
//	       stamps; keys
//	times: uvarint n, then n varints, each the difference to the one
//	       before (the first to 0)
//	stamps: uvarint n, then n times: string key, varint Size, Mtime,
//	       Ctime, uvarint ID (keys sorted)
//	keys:  uvarint n, then n times: uvarint shared prefix with the key
//	       before, string suffix, byte flags (keyFile, keySession,
//	       keyGone, keyGoneSession); the keys sorted, each once; then a
//	       record for each key with keyFile (ownFile), then for each key
//	       with keySession (ownSession), in key order
//	ownFile: uvarint session (0: the key itself; 1: string follows;
//	       2+k: key k), No, Kind, varint Size, Mtime, Ctime-Mtime,
//	       Size-End, End-TailOff, uvarint Ino, TailCRC, Docs
//	ownSession: uvarint Format, string ID, dict Name, dict Cwd
//	string: uvarint length, bytes; dict: uvarint 0 then a string (a new
//	       entry), or k+1 for the k-th string of the dictionary
//
// A key's shared prefix is at most keyPrefixMax times its suffix's
// length plus 2, so the keys decoded are at most some 17 times the bytes
// they were decoded from.
const (
	ownStateMagic = "SXOS"
	keyPrefixMax  = 16

	keyFile        = 1
	keySession     = 2
	keyGone        = 4
	keyGoneSession = 8
	keyFlags       = 15
)

var errOwnCodec = errors.New("bad encoding")

type ownEnc struct{ b []byte }

func (e *ownEnc) u(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *ownEnc) i(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *ownEnc) s(v string)   { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *ownEnc) raw(v string) { e.b = append(e.b, v...) }

func (e *ownEnc) times(t []int64) {
	e.u(uint64(len(t)))
	prev := int64(0)
	for _, v := range t {
		e.i(v - prev) // wraps: exact both ways
		prev = v
	}
}

func (e *ownEnc) stamps(m map[string]ownStamp) {
	e.u(uint64(len(m)))
	for _, k := range slices.Sorted(mapKeys(m)) {
		v := m[k]
		e.s(k)
		e.i(v.Size)
		e.i(v.Mtime)
		e.i(v.Ctime)
		e.u(v.ID)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// keys writes the keys section of files, sessions and the gone lists.
func (e *ownEnc) keys(files map[string]*ownFile, sessions map[string]*ownSession, gone, goneSessions []string) {
	flags := make(map[string]uint8, len(files)+len(sessions)+len(gone)+len(goneSessions))
	for k := range files {
		flags[k] |= keyFile
	}
	for k := range sessions {
		flags[k] |= keySession
	}
	for _, k := range gone {
		flags[k] |= keyGone
	}
	for _, k := range goneSessions {
		flags[k] |= keyGoneSession
	}
	keys := slices.Sorted(mapKeys(flags))
	index := make(map[string]int, len(keys))
	e.u(uint64(len(keys)))
	prev := ""
	for n, k := range keys {
		p := 0
		for p < len(prev) && p < len(k) && prev[p] == k[p] {
			p++
		}
		p = min(p, keyPrefixMax*(len(k)+2)/(keyPrefixMax+1))
		e.u(uint64(p))
		e.s(k[p:])
		e.b = append(e.b, flags[k])
		index[k] = n
		prev = k
	}
	for _, k := range keys {
		r := files[k]
		if r == nil {
			continue
		}
		if r.Session == k {
			e.u(0)
		} else if n, ok := index[r.Session]; ok {
			e.u(uint64(n) + 2)
		} else {
			e.u(1)
			e.s(r.Session)
		}
		e.u(uint64(r.No))
		e.u(uint64(r.Kind))
		e.i(r.Size)
		e.i(r.Mtime)
		e.i(r.Ctime - r.Mtime)
		e.i(r.Size - r.End)
		e.i(r.End - r.TailOff)
		e.u(r.Ino)
		e.u(uint64(r.TailCRC))
		e.u(r.Docs)
	}
	dict := map[string]int{}
	dictStr := func(s string) {
		if n, ok := dict[s]; ok {
			e.u(uint64(n) + 1)
			return
		}
		dict[s] = len(dict)
		e.u(0)
		e.s(s)
	}
	for _, k := range keys {
		se := sessions[k]
		if se == nil {
			continue
		}
		e.u(uint64(se.Format))
		e.s(se.ID)
		dictStr(se.Name)
		dictStr(se.Cwd)
	}
}

// encodeOwnState appends st's encoding to b.
func encodeOwnState(b []byte, st *ownState) []byte {
	e := &ownEnc{b: b}
	e.raw(ownStateMagic)
	e.u(uint64(st.Version))
	e.u(st.MaxID)
	e.u(uint64(st.NextFile))
	e.u(st.Dead)
	e.u(st.Gen)
	e.times(st.Times)
	e.stamps(st.Stamps)
	e.keys(st.Files, st.Sessions, nil, nil)
	return e.b
}

// encodeOwnDelta appends d's encoding to b.
func encodeOwnDelta(b []byte, d *ownDelta) []byte {
	e := &ownEnc{b: b}
	e.u(d.MaxID)
	e.u(uint64(d.NextFile))
	e.u(d.Dead)
	e.i(int64(d.TimesFrom))
	e.times(d.Times)
	e.stamps(d.Stamps)
	e.keys(d.Files, d.Sessions, d.Gone, d.GoneSessions)
	return e.b
}

// ownDec reads an encoding; the first error sticks (every read after it
// returns zero), so a caller checks once per record.
type ownDec struct {
	b   []byte
	off int
	str string // b as a string (shared): the strings decoded are slices of it
	err error
}

func (d *ownDec) fail(why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", errOwnCodec, why, d.off)
	}
}

func (d *ownDec) u() uint64 {
	if d.off < len(d.b) && d.b[d.off] < 0x80 {
		v := uint64(d.b[d.off])
		d.off++
		return v
	}
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *ownDec) i() int64 {
	u := d.u()
	return int64(u>>1) ^ -int64(u&1)
}

// max reads a uvarint of at most m.
func (d *ownDec) max(m uint64) uint64 {
	v := d.u()
	if v > m {
		d.fail("value out of range")
		return 0
	}
	return v
}

// count reads a count of items of at least per bytes each.
func (d *ownDec) count(per int) int {
	v := d.u()
	if v > uint64(len(d.b)-d.off)/uint64(per) {
		d.fail("count past the end")
		return 0
	}
	return int(v)
}

func (d *ownDec) bytes() []byte {
	n := d.count(1)
	if d.err != nil {
		return nil
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b
}

func (d *ownDec) s() string {
	n := d.count(1)
	if d.err != nil || n == 0 {
		return ""
	}
	s := d.str[d.off : d.off+n]
	d.off += n
	return s
}

func (d *ownDec) times() []int64 {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	t := make([]int64, n)
	prev := int64(0)
	for k := range t {
		prev += d.i()
		t[k] = prev
	}
	return t
}

func (d *ownDec) stamps() map[string]ownStamp {
	n := d.count(5)
	if n == 0 {
		return nil
	}
	m := make(map[string]ownStamp, n)
	for range n {
		k := d.s()
		m[k] = ownStamp{Size: d.i(), Mtime: d.i(), Ctime: d.i(), ID: d.u()}
	}
	if len(m) != n {
		d.fail("stamps twice")
	}
	return m
}

type ownKeys struct {
	files        map[string]*ownFile
	sessions     map[string]*ownSession
	gone         []string
	goneSessions []string
}

// keys reads the keys section: one pass over the keys for their size
// and counts, then one that builds them all in one string.
func (d *ownDec) keys() ownKeys {
	var out ownKeys
	n := d.count(3)
	start := d.off
	total, nFiles, nSessions, nGone, nGoneSessions := 0, 0, 0, 0, 0
	var prev []byte
	for range n {
		p := d.u()
		suf := d.bytes()
		if d.off >= len(d.b) {
			d.fail("torn key")
		}
		if d.err != nil {
			return out
		}
		f := d.b[d.off]
		d.off++
		if p > uint64(len(prev)) || p > keyPrefixMax*uint64(len(suf)+2) || f == 0 || f > keyFlags {
			d.fail("bad key")
			return out
		}
		if prev != nil && bytes.Compare(suf, prev[p:]) <= 0 {
			d.fail("keys out of order")
			return out
		}
		total += int(p) + len(suf)
		prev = append(prev[:p], suf...)
		nFiles += int(f & keyFile)
		nSessions += int(f&keySession) >> 1
		nGone += int(f&keyGone) >> 2
		nGoneSessions += int(f&keyGoneSession) >> 3
	}
	d.off = start
	var sb strings.Builder
	sb.Grow(total)
	ends := make([]int, n)
	flags := make([]uint8, n)
	for k := range n {
		p := int(d.u())
		suf := d.bytes()
		flags[k] = d.b[d.off]
		d.off++
		// The prefix is the key before's, already in sb (grown to
		// total: it is never moved).
		from := startOf(ends, k-2) // where key k-1 starts
		sb.WriteString(sb.String()[from : from+p])
		sb.Write(suf)
		ends[k] = sb.Len()
	}
	all := sb.String()
	key := func(k int) string { return all[startOf(ends, k-1):ends[k]] }
	out.files = make(map[string]*ownFile, nFiles)
	out.sessions = make(map[string]*ownSession, nSessions)
	if nGone > 0 {
		out.gone = make([]string, 0, nGone)
	}
	if nGoneSessions > 0 {
		out.goneSessions = make([]string, 0, nGoneSessions)
	}
	// Each record is at least 11 (file) or 4 (session) bytes.
	if nFiles*11+nSessions*4 > len(d.b)-d.off {
		d.fail("records past the end")
		return out
	}
	fs := make([]ownFile, nFiles)
	fi := 0
	for k := range n {
		if flags[k]&keyGone != 0 {
			out.gone = append(out.gone, key(k))
		}
		if flags[k]&keyGoneSession != 0 {
			out.goneSessions = append(out.goneSessions, key(k))
		}
		if flags[k]&keyFile == 0 {
			continue
		}
		r := &fs[fi]
		fi++
		switch ref := d.max(uint64(n) + 1); ref {
		case 0:
			r.Session = key(k)
		case 1:
			r.Session = d.s()
		default:
			r.Session = key(int(ref - 2))
		}
		r.No = uint32(d.max(math.MaxUint32))
		r.Kind = fileKind(d.max(math.MaxUint8))
		r.Size = d.i()
		r.Mtime = d.i()
		r.Ctime = r.Mtime + d.i()
		r.End = r.Size - d.i()
		r.TailOff = r.End - d.i()
		r.Ino = d.u()
		r.TailCRC = uint32(d.max(math.MaxUint32))
		r.Docs = d.u()
		if d.err != nil {
			return out
		}
		out.files[key(k)] = r
	}
	ss := make([]ownSession, nSessions)
	si := 0
	var dict []string
	dictStr := func() string {
		v := d.max(uint64(len(dict)))
		if v == 0 {
			s := d.s()
			dict = append(dict, s)
			return s
		}
		return dict[v-1]
	}
	for k := range n {
		if flags[k]&keySession == 0 {
			continue
		}
		se := &ss[si]
		si++
		se.Format = layout.Format(d.max(math.MaxUint8))
		se.ID = d.s()
		se.Name = dictStr()
		se.Cwd = dictStr()
		if d.err != nil {
			return out
		}
		out.sessions[key(k)] = se
	}
	return out
}

// startOf is where key k+1 starts: the end of key k (0 before the first).
func startOf(ends []int, k int) int {
	if k < 0 {
		return 0
	}
	return ends[k]
}

// newOwnDec decodes b, which is the decoder's from then on: the strings
// it decodes share b's memory (a state of 50,000 files is 7.6 MB, a copy
// of which was a tenth of what a search in a new process allocated), so
// b is never changed after.
func newOwnDec(b []byte) *ownDec {
	return &ownDec{b: b, str: unsafe.String(unsafe.SliceData(b), len(b))}
}

func (d *ownDec) done() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("bytes after the end")
	}
	return d.err
}

// decodeOwnState decodes a state's encoding (errOwnCodec if damaged).
// The state's strings share b's memory: b is never changed after.
func decodeOwnState(b []byte) (*ownState, error) {
	if len(b) < len(ownStateMagic) || string(b[:len(ownStateMagic)]) != ownStateMagic {
		return nil, fmt.Errorf("%w: not a version %d state", errOwnCodec, ownVersion)
	}
	d := newOwnDec(b)
	d.off = len(ownStateMagic)
	st := &ownState{}
	st.Version = int(d.max(math.MaxInt32))
	if d.err == nil && st.Version != ownVersion {
		return nil, fmt.Errorf("%w: version %d", errOwnCodec, st.Version)
	}
	st.MaxID = d.u()
	st.NextFile = uint32(d.max(math.MaxUint32))
	st.Dead = d.u()
	st.Gen = d.u()
	st.Times = d.times()
	st.Stamps = d.stamps()
	if d.err != nil {
		return nil, d.err
	}
	k := d.keys()
	if k.gone != nil || k.goneSessions != nil {
		d.fail("gone keys in a state")
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	st.Files, st.Sessions = k.files, k.sessions
	return st, nil
}

// decodeOwnDelta decodes a log record's encoding (errOwnCodec if
// damaged). Its strings share b's memory, as decodeOwnState's do.
func decodeOwnDelta(b []byte) (*ownDelta, error) {
	d := newOwnDec(b)
	o := &ownDelta{}
	o.MaxID = d.u()
	o.NextFile = uint32(d.max(math.MaxUint32))
	o.Dead = d.u()
	tf := d.i()
	if tf < math.MinInt32 || tf > math.MaxInt32 {
		d.fail("bad TimesFrom")
	}
	o.TimesFrom = int(tf)
	o.Times = d.times()
	o.Stamps = d.stamps()
	if d.err != nil {
		return nil, d.err
	}
	k := d.keys()
	if err := d.done(); err != nil {
		return nil, err
	}
	o.Files, o.Sessions, o.Gone, o.GoneSessions = k.files, k.sessions, k.gone, k.goneSessions
	return o, nil
}
