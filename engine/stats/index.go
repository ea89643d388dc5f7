package stats

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// The stats index caches what each session file adds to Dir's total, one
// index file per directory under the user cache directory
// (<cache>/stats-index/<the first 32 hex digits of the SHA-256 of the
// directory's absolute path>), so that adding up a store of thousands of
// sessions reads one file a directory instead of every session. It works
// as engine's list index does (internal/cacheindex), and is never the
// source of truth:
//
//   - an entry is used only while the file's size, modification time
//     (nanoseconds), identity (inode) and inode change time are what they
//     were when it was made, and files modified in the last two seconds,
//     symbolic links and files that could not be read are never cached
//     (where a stat has no inode or change time, on Windows, a file
//     rewritten in place with its size and modification time put back is
//     not noticed);
//   - an entry holds the file's own Scope, unrounded (floats written so
//     that they read back to the same bits), what it spent per quarter
//     of an hour (UTC) and model (for DirOptions.Usage, made days of the
//     local time zone when read), its header line (for
//     DirOptions.Header), or why it was left out (no header, or the
//     message of the migration error): Dir adds the files' Scopes up in
//     path order whether they come from the index or from the files, so
//     the totals are the same to the bit with and without it;
//   - the index is JSON lines, later lines for a name winning; a missing,
//     damaged or foreign (another directory's) index is ignored and
//     rebuilt, a damaged line (checksum) is ignored; deleting it is always
//     safe. It is written 0600 in a 0700 directory, never inside the
//     store itself, and a cache directory that cannot be made means no
//     index.

// statsIndexKind is the stats index's directory under the cache
// directory.
const statsIndexKind = "stats-index"

// indexHeader is the first line of dir's stats index. Its version is
// to be raised whenever what a file adds changes (Scope.Add, ReadUsage,
// migration, the skip rules, what an entry holds), so that older
// entries are not used (2: pi 1.x's usage entries and summary usages
// count; 3: the usage per quarter of an hour and model, "days"). An
// index of another version is ignored and rebuilt.
func indexHeader(dir string) []byte { return cacheindex.Header("sessctlStatsIndex", 3, dir) }

// fileStats is what one session file adds to Dir's total.
type fileStats struct {
	// header is the file's header line and where it was (nil: the file
	// has no session header).
	header           []byte
	headerOff        int64
	headerLine       int
	skip             error      // why the file is left out; nil when counted
	scope            *fileScope // the file's entries, unrounded; nil when left out
	days             []dayUse   // what the file spent per quarter of an hour and model, when counted
	headerEntryCache *jsonl.Entry
}

// errSkip is a cached reason for leaving a file out: the message of the
// error the file gave when it was read.
type errSkip string

func (e errSkip) Error() string { return string(e) }

// headerEntry returns the file's header as an entry, parsed from its line.
func (f *fileStats) headerEntry() jsonl.Entry {
	if f.headerEntryCache == nil {
		en, err := jsonl.ParseEntry(f.header)
		if err != nil {
			return jsonl.Entry{Raw: f.header}
		}
		en.Offset, en.Line = f.headerOff, f.headerLine
		f.headerEntryCache = &en
	}
	return *f.headerEntryCache
}

// countFile computes the fileStats of a file's bytes: its header and the
// Scope of its entries migrated to version 3, or why it is left out. The
// result shares no memory with data.
func countFile(data []byte) *fileStats {
	parsed := jsonl.ParseFile(data)
	if len(parsed.Entries) == 0 || !parsed.Entries[0].IsHeader() || parsed.Entries[0].IDKind != jsonl.KindString {
		return &fileStats{skip: errNoHeader}
	}
	h := &parsed.Entries[0]
	out := &fileStats{header: bytes.Clone(h.Raw), headerOff: h.Offset, headerLine: h.Line}
	entries, _, err := migrate.Entries(parsed.Entries)
	if err != nil {
		out.skip = err
		return out
	}
	s := NewScope()
	days := dayCounter{}
	for i := 1; i < len(entries); i++ {
		if !entries[i].IsHeader() {
			if sp, ok := s.add(&entries[i]); ok {
				days.add(&entries[i], sp)
			}
		}
	}
	out.scope = compact(s)
	out.days = days.list()
	return out
}

// fileScope is one file's Scope, unrounded, compact and sharing no
// memory with the file's bytes: types and roles by name, models in the
// order they first occur.
type fileScope struct {
	entries, messages int
	types, roles      []count
	usage             Usage
	models            []Model
}

// count is a name and how many times it occurs.
type count struct {
	name string
	n    int
}

// compact returns the fileScope of s, an unfinished Scope.
func compact(s *Scope) *fileScope {
	counts := func(m map[string]int) []count {
		out := make([]count, 0, len(m))
		for k, v := range m {
			out = append(out, count{strings.Clone(k), v})
		}
		slices.SortFunc(out, func(a, b count) int { return strings.Compare(a.name, b.name) })
		return out
	}
	f := &fileScope{entries: s.Entries, messages: s.Messages, types: counts(s.Types), roles: counts(s.Roles), usage: s.Usage}
	f.models = make([]Model, len(s.Models))
	for i, m := range s.Models {
		f.models[i] = Model{Model: strings.Clone(m.Model), Provider: strings.Clone(m.Provider), ModelID: strings.Clone(m.ModelID), Messages: m.Messages, Usage: m.Usage}
	}
	return f
}

// merge adds the counts of a file to s.
func (s *Scope) merge(f *fileScope) {
	s.Entries += f.entries
	s.Messages += f.messages
	for _, c := range f.types {
		s.Types[c.name] += c.n
	}
	for _, c := range f.roles {
		s.Roles[c.name] += c.n
	}
	s.Usage.Add(f.usage)
	for i := range f.models {
		m := &f.models[i]
		ms := s.byModel[m.Model]
		if ms == nil {
			ms = &Model{Model: m.Model, Provider: m.Provider, ModelID: m.ModelID}
			s.byModel[m.Model] = ms
			s.Models = append(s.Models, ms)
		}
		ms.Messages += m.Messages
		ms.Usage.Add(m.Usage)
	}
}

// indexEntry is one cached file.
type indexEntry struct {
	cacheindex.Stamp
	stats *fileStats
}

// readIndex loads dir's stats index; a missing or unusable one gives an
// empty map.
func readIndex(fsys vfs.FS, cacheDir, dir string) map[string]indexEntry {
	return cacheindex.ReadLines(fsys, cacheindex.Path(cacheDir, statsIndexKind, dir), indexHeader(dir), decodeIndexLine)
}

// writeIndex replaces dir's stats index with entries, in names' order.
// Best effort.
func writeIndex(fsys vfs.FS, cacheDir, dir string, entries map[string]indexEntry) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	buf := make([]byte, 0, 1<<16)
	buf = append(buf, indexHeader(dir)...)
	buf = append(buf, '\n')
	for _, n := range names {
		buf = encodeIndexLine(buf, n, entries[n])
	}
	cacheindex.Replace(fsys, cacheindex.Path(cacheDir, statsIndexKind, dir), buf)
}

// encodeIndexLine writes one index line, newline included (see
// cacheindex.AppendLine), whose payload "stats" is
//
//	{"skip":"no session header"}, or
//	{"header":<line>,"offset":N,"line":N,"skip":"<migration error>"}, or
//	{"header":<line>,"offset":N,"line":N,"scope":<scope>,"days":<days>}
//
// (days: encodeDays).
func encodeIndexLine(dst []byte, name string, ent indexEntry) []byte {
	f := ent.stats
	p := jsonl.NewObject(256)
	if f.header != nil {
		p.Raw("header", f.header).Number("offset", float64(f.headerOff)).Number("line", float64(f.headerLine))
	}
	if f.skip != nil {
		p.String("skip", f.skip.Error())
	} else {
		p.Raw("scope", encodeScope(f.scope)).Raw("days", encodeDays(f.days))
	}
	return cacheindex.AppendLine(dst, name, ent.Stamp, "stats", p.Bytes())
}

// decodeIndexLine reads a line encodeIndexLine wrote; a damaged one is
// skipped.
func decodeIndexLine(line []byte) (string, indexEntry, bool) {
	var ent indexEntry
	name, st, payload, ok := cacheindex.DecodeLine(line, "stats")
	if !ok || payload == nil {
		return "", ent, false
	}
	f := &fileStats{}
	hasScope, hasSkip, hasDays := false, false, false
	err := jsonl.MembersTrusted(payload, func(key, v []byte) bool {
		switch string(key) {
		case "header":
			f.header = bytes.Clone(v)
		case "offset":
			n, _ := jsonl.Number(v)
			f.headerOff = int64(n)
		case "line":
			n, _ := jsonl.Number(v)
			f.headerLine = int(n)
		case "skip":
			var s string
			s, hasSkip = jsonl.String(v)
			f.skip = errSkip(s)
			if s == errNoHeader.Error() {
				f.skip = errNoHeader
			}
		case "scope":
			f.scope, hasScope = decodeScope(v)
		case "days":
			f.days, hasDays = decodeDays(v)
		}
		return true
	})
	if err != nil || hasScope == hasSkip || hasScope != hasDays || (f.header == nil) != (f.skip == errNoHeader) {
		return "", ent, false
	}
	ent.Stamp, ent.stats = st, f
	return name, ent, true
}

// encodeScope writes a fileScope: {"entries","messages",
// "types":[[name,n],...],"roles":[[name,n],...],"usage":<usage>,
// "models":[[model,provider,modelId,messages,<usage>],...]}, a usage
// being a string of its ten numbers (floats as strconv's shortest 'g'
// form, which parses back to the same bits). "usage" is left out when
// there is one model and its usage is the total's.
func encodeScope(f *fileScope) []byte {
	b := jsonl.NewObject(256).Number("entries", float64(f.entries)).Number("messages", float64(f.messages))
	counts := func(cs []count) []byte {
		out := []byte{'['}
		for i, c := range cs {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, '[')
			out = jsonl.AppendString(out, c.name)
			out = append(out, ',')
			out = strconv.AppendInt(out, int64(c.n), 10)
			out = append(out, ']')
		}
		return append(out, ']')
	}
	b.Raw("types", counts(f.types)).Raw("roles", counts(f.roles))
	if len(f.models) != 1 || !sameCounts(f.models[0].Usage, f.usage) {
		b.String("usage", usageString(f.usage))
	}
	models := []byte{'['}
	for i, m := range f.models {
		if i > 0 {
			models = append(models, ',')
		}
		models = append(models, '[')
		models = jsonl.AppendString(models, m.Model)
		models = append(models, ',')
		models = jsonl.AppendString(models, m.Provider)
		models = append(models, ',')
		models = jsonl.AppendString(models, m.ModelID)
		models = append(models, ',')
		models = strconv.AppendInt(models, int64(m.Messages), 10)
		models = append(models, ',', '"')
		models = append(models, usageString(m.Usage)...)
		models = append(models, '"', ']')
	}
	models = append(models, ']')
	return b.Raw("models", models).Bytes()
}

// usageString writes a Usage's ten numbers, space-separated.
func usageString(u Usage) string {
	b := make([]byte, 0, 96)
	for i, n := range []int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.TotalTokens} {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	for _, f := range []float64{u.Cost.Input, u.Cost.Output, u.Cost.CacheRead, u.Cost.CacheWrite, u.Cost.Total} {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return string(b)
}

// parseUsage reads what usageString wrote, as a raw JSON string (it
// holds nothing to escape).
func parseUsage(v []byte) (Usage, bool) {
	var u Usage
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return u, false
	}
	rest := v[1 : len(v)-1]
	field := func() (string, bool) {
		k := bytes.IndexByte(rest, ' ')
		if k < 0 {
			k = len(rest)
		}
		f := rest[:k]
		rest = rest[min(k+1, len(rest)):]
		return unsafe.String(unsafe.SliceData(f), len(f)), len(f) > 0
	}
	for _, p := range []*int64{&u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.TotalTokens} {
		f, ok := field()
		n, err := strconv.ParseInt(f, 10, 64)
		if !ok || err != nil {
			return u, false
		}
		*p = n
	}
	for _, p := range []*float64{&u.Cost.Input, &u.Cost.Output, &u.Cost.CacheRead, &u.Cost.CacheWrite, &u.Cost.Total} {
		f, ok := field()
		x, err := strconv.ParseFloat(f, 64)
		if !ok || err != nil {
			return u, false
		}
		*p = x
	}
	return u, len(rest) == 0
}

// decodeScope reads what encodeScope wrote.
func decodeScope(v []byte) (*fileScope, bool) {
	f := &fileScope{}
	ok := true
	hasUsage := false
	fail := func() bool { ok = false; return false }
	integer := func(v []byte) (int, bool) {
		n, err := strconv.Atoi(unsafe.String(unsafe.SliceData(v), len(v)))
		return n, err == nil && len(v) > 0
	}
	counts := func(arr []byte) []count {
		var out []count
		err := jsonl.ElementsTrusted(arr, func(pair []byte) bool {
			var c count
			i, good := 0, true
			_ = jsonl.ElementsTrusted(pair, func(x []byte) bool {
				switch i {
				case 0:
					c.name, good = jsonl.String(x)
				case 1:
					c.n, good = integer(x)
				default:
					good = false
				}
				i++
				return good
			})
			if !good || i != 2 {
				return fail()
			}
			out = append(out, c)
			return true
		})
		if err != nil {
			fail()
		}
		return out
	}
	err := jsonl.MembersTrusted(v, func(key, val []byte) bool {
		good := true
		switch string(key) {
		case "entries":
			f.entries, good = integer(val)
		case "messages":
			f.messages, good = integer(val)
		case "types":
			f.types = counts(val)
		case "roles":
			f.roles = counts(val)
		case "usage":
			f.usage, good = parseUsage(val)
			hasUsage = true
		case "models":
			good = jsonl.ElementsTrusted(val, func(mv []byte) bool {
				var m Model
				i, mok := 0, true
				_ = jsonl.ElementsTrusted(mv, func(x []byte) bool {
					switch i {
					case 0:
						m.Model, mok = jsonl.String(x)
					case 1:
						m.Provider, mok = jsonl.String(x)
					case 2:
						m.ModelID, mok = jsonl.String(x)
					case 3:
						m.Messages, mok = integer(x)
					case 4:
						m.Usage, mok = parseUsage(x)
					default:
						mok = false
					}
					i++
					return mok
				})
				if !mok || i != 5 {
					return fail()
				}
				f.models = append(f.models, m)
				return true
			}) == nil
		}
		if !good {
			return fail()
		}
		return true
	})
	if !hasUsage {
		if len(f.models) != 1 {
			return nil, false
		}
		f.usage = f.models[0].Usage
	}
	return f, ok && err == nil
}
