package jsonl

import (
	"bytes"
	"math"
	"runtime"
	"slices"
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
	Raw       []byte // the JSON object, without surrounding whitespace and newline
	Type      string // "" when absent or not a string
	ID        string
	ParentID  string
	Timestamp string
	// Role is the "role" of a message entry's message object, when it is
	// a string (see Message).
	Role   string
	Offset int64 // byte offset of the line in the file
	Line   int   // 1-based line number in the file, 0 when not read from a file

	// msgStart and msgEnd locate the "message" member of a message entry
	// in Raw, found while the line was validated; msgEnd is 0 when there
	// is none or it is not an object.
	msgStart, msgEnd int32

	IDKind     Kind // KindString normally; KindAbsent when the line has no id
	ParentKind Kind // KindString, KindNull for a root, KindAbsent when missing

	// segLen is the length of the line's text from Offset, without its
	// newline, as parsed (0 when unknown): what Fill reads back into a
	// detached entry.
	segLen int32
}

// Built describes a line this process has just encoded, so that it can be
// indexed without being parsed again (see NewEntry).
type Built struct {
	Type, ID, Timestamp string
	ParentID            string
	ParentKind          Kind // KindString, KindNull, or KindAbsent
	// MsgStart and MsgEnd locate a message entry's "message" object in
	// the line (MsgEnd 0: none). The object must be canonical, as
	// Marshal makes it.
	MsgStart, MsgEnd int
}

// NewEntry returns the Entry of a line built by this process, without
// parsing it: the caller vouches for the envelope it encoded.
func NewEntry(raw []byte, b Built) Entry {
	e := Entry{Raw: raw, Type: b.Type, ID: b.ID, IDKind: KindString, ParentID: b.ParentID,
		ParentKind: b.ParentKind, Timestamp: b.Timestamp}
	if b.MsgEnd > b.MsgStart && b.MsgEnd <= len(raw) && b.MsgEnd <= math.MaxInt32 {
		e.msgStart, e.msgEnd = int32(b.MsgStart), int32(b.MsgEnd)
		e.Role = canonicalRole(raw[b.MsgStart:b.MsgEnd])
	}
	return e
}

// canonicalRole returns the "role" of a canonical message object (which
// has no repeated keys), looking at the first member before scanning.
func canonicalRole(msg []byte) string {
	const prefix = `{"role":"`
	if len(msg) > len(prefix) && string(msg[:len(prefix)]) == prefix {
		rest := msg[len(prefix)-1:]
		if end := bytes.IndexByte(rest[1:], '"'); end >= 0 && bytes.IndexByte(rest[1:end+1], '\\') < 0 {
			return roleName(rest[:end+2])
		}
	}
	v, _ := Lookup(msg, "role")
	return roleName(v)
}

// Message returns the raw "message" object of a message entry, or nil when
// the entry has none or it is not a JSON object. It costs nothing: the
// span was found when the line was parsed.
func (e *Entry) Message() []byte {
	if e.msgEnd == 0 || e.Raw == nil {
		return nil
	}
	return e.Raw[e.msgStart:e.msgEnd]
}

// HasMessage reports whether the entry has a "message" member that is an
// object, also for a detached entry (whose Message is nil until Fill).
func (e *Entry) HasMessage() bool { return e.msgEnd != 0 }

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
	// TypeUsage is pi 1.x's model-attributed usage that is not model
	// context: kind, provider, model, usage, note?.
	TypeUsage = "usage"
	// TypeContextEdit is pi 1.x's edit of an earlier entry's model
	// context: targetId, replacement (null omits it, {content} replaces
	// its content); the history is unchanged.
	TypeContextEdit = "context_edit"
)

// ParseEntry decodes the envelope of one line. line may carry surrounding
// JSON whitespace (a CR from CRLF, spaces). ok is false when the line is not
// a single valid JSON object; err says why.
func ParseEntry(line []byte) (e Entry, err error) {
	return parseEntry(line, copyStrings, nil)
}

// aliasing says which of an entry's decoded strings may share the memory
// of its line instead of being copied (a string with escapes is always a
// copy). The line must then never change while the strings are used.
type aliasing uint8

const (
	copyStrings    aliasing = iota // every string is a copy
	aliasTimestamp                 // Timestamp shares the line (ParseFile)
	aliasStrings                   // ID, ParentID and Timestamp do (EachEntry)
)

// parseEntry is ParseEntry, with the strings that alias says share line's
// memory. A non-nil mm receives the message's members.
func parseEntry(line []byte, alias aliasing, mm *MessageMembers) (e Entry, err error) {
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
	if err := e.walk(alias, mm); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// walk validates e.Raw, one object, and decodes the envelope members; for
// a "message" member that is an object it also finds the role, in the same
// pass. Later duplicates of a key win, as in JSON.parse. The strings
// alias names share e.Raw's memory where they need no unescaping. A
// non-nil mm receives the members of the message (see MessageMembers).
func (e *Entry) walk(alias aliasing, mm *MessageMembers) error {
	if mm != nil {
		mm.reset()
	}
	raw := e.Raw
	i := SkipWS(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		i++
	} else {
		for {
			if i >= len(raw) || raw[i] != '"' {
				return syntaxErr(i, "expected object key")
			}
			kend, esc, err := skipString(raw, i)
			if err != nil {
				return err
			}
			key := raw[i+1 : kend-1]
			if esc {
				k, _ := decodeStringBody(key)
				key = []byte(k)
			}
			i = SkipWS(raw, kend)
			if i >= len(raw) || raw[i] != ':' {
				return syntaxErr(i, "expected ':'")
			}
			i = SkipWS(raw, i+1)
			var vend int
			if string(key) == "message" && i < len(raw) && raw[i] == '{' {
				n, role, err := objectRole(raw[i:], mm)
				if err != nil {
					return err
				}
				vend = i + n
				if vend > math.MaxInt32 {
					return syntaxErr(i, "message too large")
				}
				e.msgStart, e.msgEnd = int32(i), int32(vend)
				e.Role = roleName(role)
			} else {
				if vend, err = SkipValue(raw, i); err != nil {
					return err
				}
				v := raw[i:vend]
				switch string(key) {
				case "type":
					e.Type = typeName(v)
				case "id":
					e.ID, e.IDKind = envelopeKeyAlias(v, alias == aliasStrings)
				case "parentId":
					e.ParentID, e.ParentKind = envelopeKeyAlias(v, alias == aliasStrings)
				case "timestamp":
					e.Timestamp, _ = stringValue(v, alias != copyStrings)
				case "message":
					e.msgStart, e.msgEnd, e.Role = 0, 0, ""
					if mm != nil {
						mm.reset()
					}
				}
			}
			i = SkipWS(raw, vend)
			if i >= len(raw) {
				return syntaxErr(i, "unexpected end of input")
			}
			if raw[i] == ',' {
				i = SkipWS(raw, i+1)
				continue
			}
			if raw[i] != '}' {
				return syntaxErr(i, "expected ',' or '}'")
			}
			i++
			break
		}
	}
	// Anything after the closing brace is garbage.
	if i != len(raw) {
		return syntaxErr(i, "trailing data after object")
	}
	return nil
}

// MessageMembers are the raw values of a message entry's message members
// that listing needs, found while the line is validated (the last of a
// repeated key wins, as in JSON.parse); nil when absent.
type MessageMembers struct {
	Content   []byte
	Timestamp []byte
	// Texts holds, when Content is an array, the raw "text" value of each
	// element that is an object whose "type" is the string "text", in
	// order (nil where the block has no text): pi's text blocks.
	Texts [][]byte
}

// reset empties m, keeping the room of Texts.
func (m *MessageMembers) reset() {
	m.Content, m.Timestamp, m.Texts = nil, nil, m.Texts[:0]
}

// MessageMembers returns the members of the entry's message that
// EachEntry reports, by walking the message again (zero when the entry
// has no message object).
func (e *Entry) MessageMembers() MessageMembers {
	var m MessageMembers
	if msg := e.Message(); msg != nil {
		_, _, _ = objectRole(msg, &m)
	}
	return m
}

// objectRole validates the object at the start of b and returns its
// length and the raw value of its last "role" member; a non-nil mm gets
// the content and timestamp members. It is Members without a callback, so
// the walk allocates nothing.
func objectRole(b []byte, mm *MessageMembers) (int, []byte, error) {
	var role []byte
	if mm != nil {
		mm.reset()
	}
	i := SkipWS(b, 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, nil, syntaxErr(i, "expected object key")
		}
		kend, esc, err := skipString(b, i)
		if err != nil {
			return 0, nil, err
		}
		key := b[i+1 : kend-1]
		if esc {
			k, _ := decodeStringBody(key)
			key = []byte(k)
		}
		i = SkipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, nil, syntaxErr(i, "expected ':'")
		}
		i = SkipWS(b, i+1)
		var vend int
		if mm != nil && string(key) == "content" && i < len(b) && b[i] == '[' {
			vend, err = skipContent(b, i, mm)
		} else {
			vend, err = SkipValue(b, i)
		}
		if err != nil {
			return 0, nil, err
		}
		switch string(key) {
		case "role":
			role = b[i:vend]
		case "content":
			if mm != nil {
				mm.Content = b[i:vend]
				if b[i] != '[' {
					mm.Texts = mm.Texts[:0] // from an earlier content member
				}
			}
		case "timestamp":
			if mm != nil {
				mm.Timestamp = b[i:vend]
			}
		}
		i = SkipWS(b, vend)
		if i >= len(b) {
			return 0, nil, syntaxErr(i, "unexpected end of input")
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case '}':
			return i + 1, role, nil
		default:
			return 0, nil, syntaxErr(i, "expected ',' or '}'")
		}
	}
}

// skipContent is SkipValue for the array at b[i], a message's content,
// that also collects its text blocks into mm.Texts.
func skipContent(b []byte, i int, mm *MessageMembers) (int, error) {
	mm.Texts = mm.Texts[:0]
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var end int
		var err error
		if i < len(b) && b[i] == '{' {
			end, err = textBlock(b, i, mm)
		} else {
			end, err = SkipValue(b, i)
		}
		if err != nil {
			return 0, err
		}
		i = SkipWS(b, end)
		if i >= len(b) {
			return 0, syntaxErr(i, "unexpected end of input")
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "expected ',' or ']'")
		}
	}
}

// textBlock is SkipValue for the object at b[i], a content block, that
// appends its "text" value to mm.Texts when its "type" is "text". Like
// objectRole it is members without a callback: a closure here escaped and
// cost an allocation per block of every listed message.
func textBlock(b []byte, i int, mm *MessageMembers) (int, error) {
	var typ, text []byte
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, syntaxErr(i, "expected object key")
		}
		kend, esc, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : kend-1]
		if esc {
			k, _ := decodeStringBody(key)
			key = []byte(k)
		}
		i = SkipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, syntaxErr(i, "expected ':'")
		}
		i = SkipWS(b, i+1)
		vend, err := SkipValue(b, i)
		if err != nil {
			return 0, err
		}
		switch string(key) {
		case "type":
			typ = b[i:vend]
		case "text":
			text = b[i:vend]
		}
		i = SkipWS(b, vend)
		if i >= len(b) {
			return 0, syntaxErr(i, "unexpected end of input")
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case '}':
			if string(typ) == `"text"` {
				mm.Texts = append(mm.Texts, text)
			} else if bytes.IndexByte(typ, '\\') >= 0 {
				// Only an escaped spelling of "text" is still text.
				if t, ok := String(typ); ok && t == "text" {
					mm.Texts = append(mm.Texts, text)
				}
			}
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "expected ',' or '}'")
		}
	}
}

// roleName decodes a message role, sharing the common ones.
func roleName(v []byte) string {
	switch string(v) {
	case `"user"`:
		return "user"
	case `"assistant"`:
		return "assistant"
	case `"toolResult"`:
		return "toolResult"
	case `"bashExecution"`:
		return "bashExecution"
	case `"custom"`:
		return "custom"
	}
	r, _ := String(v)
	return r
}

var errNotObject = syntaxErr(0, "JSON value is not an object")

// typeName decodes an entry type, returning the shared constant for the
// known types so that indexing a large file does not allocate one string
// per line.
func typeName(v []byte) string {
	switch string(v) {
	case `"message"`:
		return TypeMessage
	case `"session"`:
		return TypeSession
	case `"thinking_level_change"`:
		return TypeThinkingLevelChange
	case `"model_change"`:
		return TypeModelChange
	case `"compaction"`:
		return TypeCompaction
	case `"branch_summary"`:
		return TypeBranchSummary
	case `"custom"`:
		return TypeCustom
	case `"custom_message"`:
		return TypeCustomMessage
	case `"label"`:
		return TypeLabel
	case `"session_info"`:
		return TypeSessionInfo
	case `"usage"`:
		return TypeUsage
	case `"context_edit"`:
		return TypeContextEdit
	}
	t, _ := String(v)
	return t
}

func envelopeKey(v []byte) (string, Kind) { return envelopeKeyAlias(v, false) }

// envelopeKeyAlias is envelopeKey; with alias, a string id without
// escapes shares v's memory.
func envelopeKeyAlias(v []byte, alias bool) (string, Kind) {
	k := KindOf(v)
	switch k {
	case KindString:
		s, _ := stringValue(v, alias)
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
//
// Large inputs are parsed on every CPU. The entries hold slices of data,
// and their Timestamp strings share its memory too, so data must not change
// afterwards. (IDs are copied: as map keys they are compared often, and
// packed copies keep those comparisons in cache.)
func ParseFile(data []byte) *Parsed {
	p, _ := parseFile(data, false)
	return p
}

// ParseFileCanonical is ParseFile that also reports, for every entry,
// whether its line is exactly what Canonical writes for it (see
// ParseEntryCanonical), found in the same pass over the line. Timestamps
// are copied, not shared with data.
func ParseFileCanonical(data []byte) (*Parsed, []bool) {
	return parseFile(data, true)
}

func parseFile(data []byte, withCanon bool) (*Parsed, []bool) {
	p := &Parsed{Size: int64(len(data))}
	var canon []bool
	s, e := jsTrimBounds(data)
	if s < e {
		startLine := 1 + bytes.Count(data[:s], []byte{'\n'})
		var inRange int
		p.Entries, p.Malformed, canon, inRange = parseRange(nil, data, s, e, startLine, true, withCanon)
		p.Entries = p.Entries[:len(p.Entries):len(p.Entries)]
		// The newlines before s, in [s,e) and after e: no second count.
		p.Lines = startLine - 1 + inRange + bytes.Count(data[e:], []byte{'\n'})
	} else {
		p.Lines = bytes.Count(data, []byte{'\n'})
	}
	p.finish(data, 0, s, e)
	return p, canon
}

// parseRange parses the lines of data[s:e] (startLine is the number of
// the first), on every CPU when the range is large, and returns dst with
// the entries appended (written in place when dst has the room: no slice
// is copied), the malformed lines, whether each entry's line is
// canonical (withCanon), and the number of newlines in the range. With
// alias set the entries' Timestamp strings share data's memory
// (withCanon copies them).
func parseRange(dst []Entry, data []byte, s, e, startLine int, alias, withCanon bool) ([]Entry, []BadLine, []bool, int) {
	chunks := splitChunks(data, s, e)
	// One slot per line: every worker fills its own range, then the
	// ranges are closed up. No slice is grown or copied wholesale.
	firstLine := make([]int, len(chunks)+1)
	if len(chunks) == 1 {
		firstLine[1] = bytes.Count(data[s:e], []byte{'\n'}) + 1
	} else {
		var wg sync.WaitGroup
		for i, c := range chunks {
			wg.Go(func() { firstLine[i+1] = bytes.Count(data[c[0]:c[1]], []byte{'\n'}) })
		}
		wg.Wait()
		firstLine[len(chunks)]++ // as if the last chunk's last line had a newline
	}
	for i := 1; i <= len(chunks); i++ {
		firstLine[i] += firstLine[i-1]
	}
	base := len(dst)
	dst = slices.Grow(dst, firstLine[len(chunks)])
	slots := dst[base : base+firstLine[len(chunks)]]
	var canonSlots []bool
	if withCanon {
		canonSlots = make([]bool, len(slots))
	}
	counts := make([]int, len(chunks))
	bad := make([][]BadLine, len(chunks))
	run := func(i int) {
		c := chunks[i]
		var cs []bool
		if withCanon {
			cs = canonSlots[firstLine[i]:firstLine[i+1]]
		}
		counts[i], bad[i] = parseChunk(data, c[0], c[1], startLine+firstLine[i], slots[firstLine[i]:firstLine[i+1]], cs, alias)
	}
	if len(chunks) == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for i := range chunks {
			wg.Go(func() { run(i) })
		}
		wg.Wait()
	}
	n := counts[0]
	for i := 1; i < len(chunks); i++ {
		if withCanon {
			copy(canonSlots[n:], canonSlots[firstLine[i]:firstLine[i]+counts[i]])
		}
		n += copy(slots[n:], slots[firstLine[i]:firstLine[i]+counts[i]])
	}
	clear(slots[n:]) // drop references to moved entries
	var canon []bool
	if withCanon {
		canon = canonSlots[:n:n]
	}
	var malformed []BadLine
	for _, b := range bad {
		malformed = append(malformed, b...)
	}
	return dst[:base+n], malformed, canon, firstLine[len(chunks)] - 1
}

// finish sets the tail of a parse from the file's last bytes: data holds
// everything after the file's last newline (and may hold more before
// it), starting at file offset base; [s,e) are the bounds of data's text
// after JavaScript's trim. p.Lines holds the file's newline count.
func (p *Parsed) finish(data []byte, base int64, s, e int) {
	last := bytes.LastIndexByte(data, '\n') + 1
	if last == len(data) {
		p.Tail = TailClean
		return
	}
	p.Lines++
	p.TailOffset = base + int64(last)
	rest := data[last:]
	switch {
	case len(bytes.TrimSpace(rest)) == 0 || s >= e || e <= last:
		// Only whitespace (in JavaScript's sense) after the last newline.
		p.Tail = TailWhitespace
	case len(p.Entries) > 0 && p.Entries[len(p.Entries)-1].Offset >= p.TailOffset:
		p.Tail = TailNoNewline
	default:
		p.Tail = TailTorn
		// The torn fragment is not malformed data; it is an unfinished write.
		if k := len(p.Malformed); k > 0 && p.Malformed[k-1].Offset >= p.TailOffset {
			p.Malformed = p.Malformed[:k-1]
		}
	}
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

// parseChunk parses the lines of data[s:e] into slots (one per line),
// packing the object lines at the front. It returns how many there are
// and the malformed lines. first is the line number of the first line.
// A non-nil canon (as long as slots) receives whether each entry's line
// is canonical, packed like the entries.
func parseChunk(data []byte, s, e, first int, slots []Entry, canon []bool, alias bool) (int, []BadLine) {
	n := 0
	var bad []BadLine
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
		if !JSBlank(seg) {
			var ent Entry
			var err error
			if canon != nil {
				ent, canon[n], err = ParseEntryCanonical(seg)
			} else {
				mode := copyStrings
				if alias {
					mode = aliasTimestamp
				}
				ent, err = parseEntry(seg, mode, nil)
			}
			if err != nil {
				bad = append(bad, BadLine{Line: line, Offset: int64(pos), Err: err, Bytes: len(seg)})
			} else {
				ent.Line = line
				ent.Offset = int64(pos)
				if len(seg) <= math.MaxInt32 {
					ent.segLen = int32(len(seg))
				}
				slots[n] = ent
				n++
			}
		}
		line++
		pos = next
	}
	return n, bad
}

// JSBlank reports whether b is empty after JavaScript's String.trim (pi
// skips such lines).
func JSBlank(b []byte) bool {
	s, e := jsTrimBounds(b)
	return s >= e
}

// jsTrimBounds returns the bounds of b after removing leading and trailing
// JavaScript whitespace and line terminators (String.prototype.trim).
func jsTrimBounds(b []byte) (int, int) {
	s, e := 0, len(b)
	for s < e {
		if c := b[s]; c < utf8.RuneSelf {
			if !IsJSWhitespace(rune(c)) {
				break
			}
			s++
			continue
		}
		r, n := utf8.DecodeRune(b[s:e])
		if !IsJSWhitespace(r) {
			break
		}
		s += n
	}
	for e > s {
		if c := b[e-1]; c < utf8.RuneSelf {
			if !IsJSWhitespace(rune(c)) {
				break
			}
			e--
			continue
		}
		r, n := utf8.DecodeLastRune(b[s:e])
		if !IsJSWhitespace(r) {
			break
		}
		e -= n
	}
	return s, e
}

// EachEntry calls fn for every object line of a session file in order,
// with the same reading rules as ParseFile, without building a slice, and
// with the members of a message entry's message that listing needs (zero
// for other entries). e and m are reused between calls and alias data, so
// fn must copy what it keeps. It stops when fn returns false.
func EachEntry(data []byte, fn func(e *Entry, m *MessageMembers) bool) {
	s, end := jsTrimBounds(data)
	var e Entry
	var m MessageMembers
	for pos := s; pos < end; {
		nl := bytes.IndexByte(data[pos:end], '\n')
		stop, next := end, end
		if nl >= 0 {
			stop = pos + nl
			next = stop + 1
		}
		seg := data[pos:stop]
		if !JSBlank(seg) {
			var err error
			if e, err = parseEntry(seg, aliasStrings, &m); err == nil {
				e.Offset = int64(pos)
				if !fn(&e, &m) {
					return
				}
			}
		}
		pos = next
	}
}
