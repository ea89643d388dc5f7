package layout

import (
	"bytes"
	"runtime"
	"sync"
	"unicode/utf8"
)

// Entry is one JSON object line of a session file: the envelope that every
// entry shares, decoded, plus the line's bytes exactly as read. Headers
// (type "session") are entries too.
//
// Ids are opaque strings. A non-string id or parentId (which no writer
// produces, but a hand-made file may hold) is kept as "\x00" followed by
// its JSON text, so it can never equal a string id; IDKind and ParentKind
// say which it is.
type Entry struct {
	Raw        []byte // the JSON object, without surrounding whitespace and newline
	Type       string // "" when absent or not a string
	ID         string
	IDKind     Kind // KindString normally; KindAbsent when the line has no id
	ParentID   string
	ParentKind Kind // KindString, KindNull for a root, KindAbsent when missing
	Timestamp  string
	Line       int   // 1-based line number in the file, 0 when not read from a file
	Offset     int64 // byte offset of the line in the file
}

// IsHeader reports whether e is a session header line.
func (e *Entry) IsHeader() bool { return e.Type == TypeSession }

// HasParent reports whether the entry names a parent (a string, or any
// non-null value), as opposed to being a root (null) or having no parentId
// member at all.
func (e *Entry) HasParent() bool {
	return e.ParentKind != KindNull && e.ParentKind != KindAbsent
}

// Field returns the raw value of the top-level member key (the last one,
// if the line repeats it) and whether it is present.
func (e *Entry) Field(key string) ([]byte, bool) { return Lookup(e.Raw, key) }

// StringField returns the top-level member key when it is a JSON string.
func (e *Entry) StringField(key string) (string, bool) {
	v, ok := Lookup(e.Raw, key)
	if !ok {
		return "", false
	}
	return String(v)
}

// IDJSON returns the entry's id as JSON text (a string, or the raw value of
// a non-string id), and false when the entry has no id.
func (e *Entry) IDJSON() ([]byte, bool) {
	return keyJSON(e.ID, e.IDKind)
}

// ParentJSON returns the parentId as JSON text: a string, null, or the raw
// non-string value, and false when the member is absent.
func (e *Entry) ParentJSON() ([]byte, bool) {
	if e.ParentKind == KindNull {
		return []byte("null"), true
	}
	return keyJSON(e.ParentID, e.ParentKind)
}

func keyJSON(s string, k Kind) ([]byte, bool) {
	switch k {
	case KindAbsent:
		return nil, false
	case KindString:
		return AppendString(nil, s), true
	}
	return []byte(s[1:]), true
}

// KeyString returns the JSON text of an id key made by the scanner for a
// non-string id, or s itself for a string id, for messages.
func KeyString(s string) string {
	if len(s) > 0 && s[0] == 0 {
		return s[1:]
	}
	return s
}

// The entry types of the v3 format.
const (
	TypeSession             = "session"
	TypeMessage             = "message"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeModelChange         = "model_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
)

// ParseEntry decodes the envelope of one line. line may carry surrounding
// JSON whitespace (a CR from CRLF, spaces). ok is false when the line is not
// a single valid JSON object; err says why.
func ParseEntry(line []byte) (e Entry, err error) {
	s := SkipWS(line, 0)
	end := len(line)
	for end > s && isWS(line[end-1]) {
		end--
	}
	raw := line[s:end]
	if len(raw) == 0 || raw[0] != '{' {
		if len(raw) > 0 && Valid(raw) {
			return e, errNotObject
		}
		return e, syntaxErr(0, "not a JSON object")
	}
	e.Raw = raw
	n, err := members(raw, func(m *Member) bool {
		k := m.Key
		if m.KeyEsc {
			k = []byte(m.KeyString())
		}
		switch string(k) {
		case "type":
			e.Type, _ = String(m.Value)
		case "id":
			e.ID, e.IDKind = envelopeKey(m.Value)
		case "parentId":
			e.ParentID, e.ParentKind = envelopeKey(m.Value)
		case "timestamp":
			e.Timestamp, _ = String(m.Value)
		}
		return true
	})
	if err != nil {
		return Entry{}, err
	}
	// The walk stops at the closing brace; anything after it is garbage.
	if n != len(raw) {
		return Entry{}, syntaxErr(n, "trailing data after object")
	}
	return e, nil
}

var errNotObject = syntaxErr(0, "JSON value is not an object")

func envelopeKey(v []byte) (string, Kind) {
	k := KindOf(v)
	switch k {
	case KindString:
		s, _ := String(v)
		return s, k
	case KindNull:
		return "", k
	}
	return "\x00" + string(v), k
}

// BadLine is a non-blank line that is not a JSON object.
type BadLine struct {
	Line   int
	Offset int64
	Err    error
	Bytes  int // length of the line in bytes
}

// Tail describes how a file ends.
type Tail uint8

// The ways a file can end.
const (
	TailClean      Tail = iota // empty, or the last line ends with '\n'
	TailNoNewline              // the last line is a complete object without '\n'
	TailTorn                   // the last line is a fragment without '\n' (an interrupted write)
	TailWhitespace             // only whitespace follows the last '\n'
)

// Parsed is a session file split into lines and decoded envelopes.
type Parsed struct {
	Entries    []Entry   // every object line, in file order, headers included
	Malformed  []BadLine // non-blank lines that are not JSON objects
	Lines      int       // lines in the file, counting an unterminated last line
	Tail       Tail
	TailOffset int64 // offset where an unterminated last line starts
	Size       int64
}

// parallelThreshold is the file size above which parsing is split across
// CPUs.
const parallelThreshold = 4 << 20

// ParseFile splits data into lines the way pi reads a session file and
// decodes the envelope of every object line. Like pi it trims the whole
// text with JavaScript's notion of whitespace, splits on '\n' only, skips
// lines that are blank after trimming, and accepts lines with JSON
// whitespace around the object (CRLF). Unlike pi, lines that are valid JSON
// but not objects are reported as malformed instead of being indexed. An
// unterminated last line is kept when it is a complete object (pi reads it
// too) and reported as torn otherwise.
func ParseFile(data []byte) *Parsed {
	p := &Parsed{Size: int64(len(data))}
	s, e := jsTrimBounds(data)
	if s < e {
		startLine := 1 + bytes.Count(data[:s], []byte{'\n'})
		chunks := splitChunks(data, s, e)
		results := make([]*Parsed, len(chunks))
		if len(chunks) == 1 {
			results[0] = parseChunk(data, chunks[0][0], chunks[0][1], startLine)
		} else {
			// Line numbers of later chunks are fixed up afterwards.
			var wg sync.WaitGroup
			for i, c := range chunks {
				wg.Go(func() {
					results[i] = parseChunk(data, c[0], c[1], 0)
				})
			}
			wg.Wait()
			line := startLine
			for _, r := range results {
				for k := range r.Entries {
					r.Entries[k].Line += line
				}
				for k := range r.Malformed {
					r.Malformed[k].Line += line
				}
				line += r.Lines
			}
		}
		n := 0
		for _, r := range results {
			n += len(r.Entries)
		}
		p.Entries = make([]Entry, 0, n)
		for _, r := range results {
			p.Entries = append(p.Entries, r.Entries...)
			p.Malformed = append(p.Malformed, r.Malformed...)
		}
	}
	p.Lines = bytes.Count(data, []byte{'\n'})
	last := bytes.LastIndexByte(data, '\n') + 1
	switch {
	case last == len(data):
		p.Tail = TailClean
	default:
		p.Lines++
		p.TailOffset = int64(last)
		rest := data[last:]
		switch {
		case len(bytes.TrimSpace(rest)) == 0 || s >= e || int(e) <= last:
			// Only whitespace (in JavaScript's sense) after the last newline.
			p.Tail = TailWhitespace
		case len(p.Entries) > 0 && p.Entries[len(p.Entries)-1].Offset >= int64(last):
			p.Tail = TailNoNewline
		default:
			p.Tail = TailTorn
			// The torn fragment is not malformed data; it is an unfinished write.
			if k := len(p.Malformed); k > 0 && p.Malformed[k-1].Offset >= int64(last) {
				p.Malformed = p.Malformed[:k-1]
			}
		}
	}
	return p
}

// splitChunks cuts [s,e) into one chunk per CPU at line boundaries.
func splitChunks(data []byte, s, e int) [][2]int {
	n := runtime.GOMAXPROCS(0)
	if e-s < parallelThreshold || n < 2 {
		return [][2]int{{s, e}}
	}
	if n > 8 {
		n = 8
	}
	var out [][2]int
	start := s
	for k := 1; k < n; k++ {
		cut := s + (e-s)*k/n
		if cut <= start {
			continue
		}
		nl := bytes.IndexByte(data[cut:e], '\n')
		if nl < 0 {
			break
		}
		cut += nl + 1
		out = append(out, [2]int{start, cut})
		start = cut
	}
	return append(out, [2]int{start, e})
}

// parseChunk parses the lines of data[s:e]; line numbers start at first
// (or at 0 when the caller fixes them up later).
func parseChunk(data []byte, s, e, first int) *Parsed {
	r := &Parsed{}
	r.Entries = make([]Entry, 0, (e-s)/512+1)
	line := first
	for pos := s; pos < e; {
		nl := bytes.IndexByte(data[pos:e], '\n')
		end := e
		next := e
		if nl >= 0 {
			end = pos + nl
			next = end + 1
		}
		seg := data[pos:end]
		if !jsBlank(seg) {
			ent, err := ParseEntry(seg)
			if err != nil {
				r.Malformed = append(r.Malformed, BadLine{Line: line, Offset: int64(pos), Err: err, Bytes: len(seg)})
			} else {
				ent.Line = line
				ent.Offset = int64(pos)
				r.Entries = append(r.Entries, ent)
			}
		}
		line++
		r.Lines++
		pos = next
	}
	return r
}

// jsBlank reports whether line is empty after JavaScript's String.trim.
func jsBlank(b []byte) bool {
	s, e := jsTrimBounds(b)
	return s >= e
}

// jsTrimBounds returns the bounds of b after removing leading and trailing
// JavaScript whitespace and line terminators (String.prototype.trim).
func jsTrimBounds(b []byte) (int, int) {
	s, e := 0, len(b)
	for s < e {
		if c := b[s]; c < utf8.RuneSelf {
			if !jsSpaceASCII(c) {
				break
			}
			s++
			continue
		}
		r, n := utf8.DecodeRune(b[s:e])
		if !jsSpaceRune(r) {
			break
		}
		s += n
	}
	for e > s {
		if c := b[e-1]; c < utf8.RuneSelf {
			if !jsSpaceASCII(c) {
				break
			}
			e--
			continue
		}
		r, n := utf8.DecodeLastRune(b[s:e])
		if !jsSpaceRune(r) {
			break
		}
		e -= n
	}
	return s, e
}

func jsSpaceASCII(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func jsSpaceRune(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
