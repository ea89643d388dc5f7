package migrate

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// Memory is a file migrated in memory: its lines as the rewrite writes
// them, and the bytes of that rewrite.
type Memory struct {
	// Entries are the migrated lines, headers included. Raw holds the
	// new bytes; Offset and Line are those of the lines that were read.
	Entries []tree.Entry
	// Data is the migrated file, cut in a few pieces: every line of
	// Entries followed by '\n', in order. Entries' Raw share its memory.
	// Nil when nothing was migrated.
	Data [][]byte
	// Result says what was done; Malformed and Torn are 0: the lines
	// that did not parse are not in the input.
	Result Result
}

// Size returns the size of the migrated file.
func (m *Memory) Size() int64 {
	var n int64
	for _, d := range m.Data {
		n += int64(len(d))
	}
	return n
}

// memoryThreshold is the size of the lines above which InMemory works on
// every CPU, in memoryParts ranges. Tests change both.
var (
	memoryThreshold = 4 << 20
	memoryParts     = func() int { return min(runtime.GOMAXPROCS(0), 8) }
)

// InMemory migrates the parsed lines of a file in memory (see Entries)
// and also returns the bytes of the file that File would write for the
// same lines, byte for byte: the steps are the same, and the v1 ids are a
// function of the session id and the line's position. canon, when not
// nil, says for each entry whether its line is canonical (as the
// codec's canonical parse, which engine uses, reports it, with copied
// timestamps); otherwise that
// is found here, and timestamps are copied so that the result does not
// keep the memory of the lines read. Large files are
// migrated on every CPU, a range of lines each. A line the steps cannot
// parse gives an error naming it, and a Memory with only Result set.
func InMemory(entries []tree.Entry, canon []bool) (*Memory, error) {
	m := &Memory{Entries: entries}
	res := &m.Result
	if len(entries) == 0 || !entries[0].IsHeader() {
		return m, nil
	}
	res.From = VersionOf(&entries[0])
	res.To = int(res.From)
	if !Needed(res.From) {
		return m, nil
	}
	size := 0
	for i := range entries {
		size += len(entries[i].Raw) + 1
	}
	parts := 1
	if size >= memoryThreshold {
		parts = max(1, memoryParts())
	}
	// Cut at line boundaries into ranges of about equal bytes.
	bounds := make([]int, 0, parts+1)
	bounds = append(bounds, 0)
	acc, next := 0, size/parts
	for i := range entries {
		if len(bounds) < parts && acc >= next && i > bounds[len(bounds)-1] {
			bounds = append(bounds, i)
			next += size / parts
		}
		acc += len(entries[i].Raw) + 1
	}
	bounds = append(bounds, len(entries))
	parts = len(bounds) - 1

	out := make([]jsonl.Entry, len(entries))
	m.Data = make([][]byte, parts)
	errs := make([]error, parts)
	counts := make([]int, parts)
	run := func(k int) {
		m.Data[k], counts[k], errs[k] = migrateRange(entries, canon, bounds[k], bounds[k+1], res.From, out)
	}
	if parts == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for k := range parts {
			wg.Go(func() { run(k) })
		}
		wg.Wait()
	}
	for k := range parts {
		if errs[k] != nil {
			m.Entries, m.Data = nil, nil
			return m, errs[k]
		}
		res.Entries += counts[k]
	}
	m.Entries = out
	res.Migrated = true
	res.To = jsonl.CurrentVersion
	return m, nil
}

// migrateRange migrates entries[a:b] into out[a:b] and returns the bytes
// of their lines, each followed by '\n', and how many are not headers.
// The steps' state at a is rebuilt from the lines before it: the id of the
// last entry that is not a header, and where the headers are.
func migrateRange(entries []jsonl.Entry, canon []bool, a, b int, from float64, out []jsonl.Entry) ([]byte, int, error) {
	run := newRunner(entries[0].ID, from)
	run.index = a
	for i := range a {
		if entries[i].IsHeader() {
			run.st.headers[i] = true
		}
	}
	for i := a - 1; i >= 0; i-- {
		if !entries[i].IsHeader() {
			run.st.prevID, run.st.hasPrev = run.st.EntryID(i), true
			break
		}
	}
	v1 := len(run.steps) > 0 && run.steps[0].From == 1
	size := 0
	for i := a; i < b; i++ {
		size += len(entries[i].Raw) + 1
		if v1 {
			size += len(`,"id":"12345678","parentId":"12345678"`)
		}
	}
	buf := make([]byte, 0, size+64)
	ends := make([]int, b-a)
	n := 0
	for i := a; i < b; i++ {
		e := &entries[i]
		var c int8
		if canon != nil {
			c = -1
			if canon[i] {
				c = 1
			}
		}
		start := len(buf)
		prevID, hasPrev := run.st.prevID, run.st.hasPrev
		var ok bool
		if buf, ok = run.fast(buf, e, c); ok {
			run.index++
			ne := *e
			if canon == nil {
				// ParseFile's timestamps share the memory of the file
				// read, which the migrated lines need not keep.
				ne.Timestamp = strings.Clone(ne.Timestamp)
			}
			if v1 {
				ne.ID, ne.IDKind = run.st.prevID, jsonl.KindString
				ne.ParentID, ne.ParentKind = "", jsonl.KindNull
				if hasPrev {
					ne.ParentID, ne.ParentKind = prevID, jsonl.KindString
				}
			}
			out[i] = ne
		} else {
			rec, err := ParseRecord(e.Raw)
			if err != nil {
				return nil, 0, fmt.Errorf("line %d: %w", e.Line, err)
			}
			for _, s := range run.steps {
				s.Apply(run.st, run.index, rec)
			}
			run.index++
			buf = rec.AppendJSON(buf)
			ne, err := jsonl.ParseEntry(buf[start:])
			if err != nil {
				return nil, 0, fmt.Errorf("line %d: %w", e.Line, err)
			}
			ne.Line, ne.Offset = e.Line, e.Offset
			out[i] = ne
		}
		if !out[i].IsHeader() {
			n++
		}
		ends[i-a] = len(buf)
		buf = append(buf, '\n')
	}
	// buf may have moved while it grew: point the lines at its final
	// place.
	start := 0
	for i := a; i < b; i++ {
		out[i].Raw = buf[start:ends[i-a]:ends[i-a]]
		start = ends[i-a] + 1
	}
	return buf, n, nil
}

// InPlace is InMemory that builds the migrated file in the memory of the
// file's own bytes instead of a copy: data is the whole file as read,
// with room to grow (its capacity), and entries and canon its parse by
// the codec's canonical parse (whose entries share only Raw with data). Both
// are consumed: afterwards data's memory holds the migrated file (the one
// piece of Memory.Data) and entries the migrated lines. The lines are
// moved last to first, each to where the new file has it, which needs
// nothing but one pass of copying and no second buffer of the file's
// size.
//
// ok is false, and data and entries are left as they were, when that
// cannot be done: the migrated file does not fit in data's capacity, a
// line would land on bytes still to be moved (lines dropped before it
// shrank the file), or the entries are not data's. The caller then
// migrates with InMemory. A line the steps cannot parse gives an error
// (and leaves data and entries alone too).
func InPlace(data []byte, entries []tree.Entry, canon []bool) (m *Memory, ok bool, err error) {
	m = &Memory{Entries: entries}
	res := &m.Result
	if len(entries) == 0 || !entries[0].IsHeader() {
		return m, true, nil
	}
	res.From = VersionOf(&entries[0])
	res.To = int(res.From)
	if !Needed(res.From) {
		return m, true, nil
	}
	if canon == nil || len(canon) != len(entries) {
		return nil, false, nil
	}
	run := newRunner(entries[0].ID, res.From)
	v1 := run.v1()
	// First pass, in order: where each line is, what it becomes. Lines
	// the fast path does not take are migrated here, into side.
	n := len(entries)
	src := make([]int, n)    // offset of the line's Raw in data
	size := make([]int, n)   // length of the migrated line
	parent := make([]int, n) // v1 fast lines: the parent's index, -1 for null
	ids := make([]string, n) // v1: the id of each entry but the headers
	inSide := make([]int, n) // offset in side + 1; 0 for fast lines
	var side []byte
	var sideEntries []jsonl.Entry
	last := -1 // the last entry that is not a header
	for i := range entries {
		e := &entries[i]
		if e.Offset < 0 || e.Offset >= int64(len(data)) || len(e.Raw) == 0 {
			return nil, false, nil
		}
		start := jsonl.SkipWS(data, int(e.Offset))
		if start+len(e.Raw) > len(data) || &data[start] != &e.Raw[0] {
			return nil, false, nil // not a line of data
		}
		src[i] = start
		c := int8(-1)
		if canon[i] {
			c = 1
		}
		switch {
		case run.fastOK(e, c) && v1:
			size[i] = len(e.Raw) - 1 + idsLen(len(e.Raw), last >= 0)
			parent[i] = last
			ids[i] = run.st.EntryID(run.index)
			run.st.prevID, run.st.hasPrev = ids[i], true
		case run.fastOK(e, c):
			size[i] = len(e.Raw)
		default:
			rec, err := ParseRecord(e.Raw)
			if err != nil {
				return nil, false, fmt.Errorf("line %d: %w", e.Line, err)
			}
			for _, s := range run.steps {
				s.Apply(run.st, run.index, rec)
			}
			from := len(side)
			side = rec.AppendJSON(side)
			ne, err := jsonl.ParseEntry(side[from:])
			if err != nil {
				return nil, false, fmt.Errorf("line %d: %w", e.Line, err)
			}
			ne.Line, ne.Offset = e.Line, e.Offset
			if v1 && !ne.IsHeader() {
				ids[i] = ne.ID // EntryID(i), as for every line
			}
			sideEntries = append(sideEntries, ne)
			inSide[i] = from + 1
			size[i] = len(side) - from
		}
		run.index++
		if !e.IsHeader() {
			last = i
			res.Entries++
		}
	}
	// Where the lines go, and whether every line lands after the bytes
	// of the fast lines before it, which are moved later.
	dst := make([]int, n)
	at, srcEnd := 0, 0
	for i := range entries {
		if at < srcEnd {
			return nil, false, nil
		}
		dst[i] = at
		at += size[i] + 1
		if inSide[i] == 0 {
			srcEnd = src[i] + len(entries[i].Raw)
		}
	}
	if at > cap(data) {
		return nil, false, nil
	}
	// Second pass, last line first: move.
	buf := data[:at]
	var suffix [64]byte
	for i := n - 1; i >= 0; i-- {
		d, raw := dst[i], entries[i].Raw
		switch {
		case inSide[i] > 0:
			copy(buf[d:d+size[i]], side[inSide[i]-1:])
		case v1:
			copy(buf[d:], buf[src[i]:src[i]+len(raw)-1])
			p := ""
			if parent[i] >= 0 {
				p = ids[parent[i]]
			}
			copy(buf[d+len(raw)-1:], appendIDs(suffix[:0], len(raw), ids[i], p, parent[i] >= 0))
		default:
			copy(buf[d:], buf[src[i]:src[i]+len(raw)])
		}
		buf[d+size[i]] = '\n'
	}
	k := 0
	for i := range entries {
		e := &entries[i]
		switch {
		case inSide[i] > 0:
			*e = sideEntries[k]
			k++
		case v1:
			e.ID, e.IDKind = ids[i], jsonl.KindString
			e.ParentID, e.ParentKind = "", jsonl.KindNull
			if parent[i] >= 0 {
				e.ParentID, e.ParentKind = ids[parent[i]], jsonl.KindString
			}
		}
		e.Raw = buf[dst[i] : dst[i]+size[i] : dst[i]+size[i]]
	}
	m.Data = [][]byte{buf}
	res.Migrated = true
	res.To = jsonl.CurrentVersion
	return m, true, nil
}

// idsLen is the length of what appendIDs appends for 8-digit ids.
func idsLen(rawLen int, hasParent bool) int {
	n := len(`"id":"12345678","parentId":null}`)
	if rawLen > 2 {
		n++
	}
	if hasParent {
		n += len(`"12345678"`) - len("null")
	}
	return n
}
