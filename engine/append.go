package engine

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
)

// Values passed to the Append methods as `any` are encoded with
// jsonl.Marshal: json.RawMessage and []byte are taken as JSON text, other
// values go through encoding/json; either way the bytes written are what
// JSON.stringify writes (key order kept, no HTML escaping). A nil value
// means "undefined": the member is left out, as pi leaves it out.

// pending is an entry line being built: its bytes and the envelope it
// was given, so it can be indexed without being parsed again.
type pending struct {
	b    jsonl.ObjectBuilder
	meta jsonl.Built
}

// envelope starts an entry line with pi's common prefix: type, id,
// parentId (the current leaf), timestamp.
func (s *Session) envelope(typ string) *pending { return s.envelopeFor(typ, 0) }

// envelopeFor is envelope for a line that will hold room more bytes, so
// that its buffer is allocated once.
func (s *Session) envelopeFor(typ string, room int) *pending {
	p := &pending{meta: jsonl.Built{Type: typ}}
	p.b.StartIn(s.lineRoom(256+room+2)).String("type", typ)
	s.envelopeTail(p)
	return p
}

// envelopeTail adds id, parentId and timestamp, the members every entry
// type has (custom entries add them after their own).
func (s *Session) envelopeTail(p *pending) {
	p.meta.ID = s.newID()
	p.b.String("id", p.meta.ID)
	p.meta.ParentID, p.meta.ParentKind = s.parentMember(&p.b)
	p.meta.Timestamp = s.timestamp()
	p.b.String("timestamp", p.meta.Timestamp)
}

// timestamp is jsonl.ISOTime of the clock, remembering the last string:
// appends within one millisecond share it.
func (s *Session) timestamp() string {
	ms := s.opts.now().UnixMilli()
	if ms != s.lastMs || s.lastTs == "" {
		s.lastMs, s.lastTs = ms, jsonl.ISOTime(time.UnixMilli(ms))
	}
	return s.lastTs
}

// typedMessage adds the "message" member, encoding m straight into the
// line in the form message.AppendJSON gives (that of p.message(Encode(m))),
// and records where the value is.
func (p *pending) typedMessage(m message.Message) error {
	start := p.b.Len() + len(`,"message":`) // a message always follows other members
	err := p.b.Append("message", func(dst []byte) ([]byte, error) { return message.AppendJSON(dst, m) })
	if err != nil {
		return err
	}
	p.meta.MsgStart, p.meta.MsgEnd = start, p.b.Len()
	return nil
}

// commit appends the finished line.
func (s *Session) commit(p *pending) (string, error) {
	return s.appendLine(s.keepLine(p.b.Bytes()), p.meta)
}

// lineSlab is the size of the blocks appended lines are built in: one
// allocation for many lines instead of one each.
const lineSlab = 64 << 10

// lineRoom returns an empty slice at the end of the line block with at
// least n bytes of room (a new block when the current one has less), and
// all the block's remaining capacity: a line that outgrows it moves out
// of the block on its own.
func (s *Session) lineRoom(n int) []byte {
	if cap(s.lines)-len(s.lines) < n {
		s.lines = make([]byte, 0, max(lineSlab, n))
	}
	return s.lines[len(s.lines):len(s.lines)]
}

// keepLine claims line in the line block when it was built there, with
// one byte after it for its newline, and returns it with its capacity
// cut to that byte, so that nothing appended to it reaches the next line.
func (s *Session) keepLine(line []byte) []byte {
	spare := min(cap(line)-len(line), 1)
	n := len(s.lines)
	if len(line) > 0 && n < cap(s.lines) && &line[0] == &s.lines[:n+1][n] {
		s.lines = s.lines[:n+len(line)+spare]
	}
	return line[: len(line) : len(line)+spare]
}

// parentMember adds "parentId": the current leaf, or null, and returns
// what it wrote.
func (s *Session) parentMember(b *jsonl.ObjectBuilder) (string, Kind) {
	leaf, kind := s.ix.Leaf()
	switch kind {
	case KindString:
		if raw, ok := keyJSON(leaf); ok {
			b.Raw("parentId", raw)
			return leaf, KindNumber // a non-string id; its key stays as is
		}
		b.String("parentId", leaf)
		return leaf, KindString
	case KindAbsent:
		// pi writes parentId: undefined, which JSON.stringify drops.
		return "", KindAbsent
	}
	b.Null("parentId")
	return "", KindNull
}

// keyJSON returns the JSON of a non-string id key.
func keyJSON(k string) ([]byte, bool) {
	if len(k) > 0 && k[0] == 0 {
		return []byte(k[1:]), true
	}
	return nil, false
}

// newID draws an entry id that no indexed entry has.
func (s *Session) newID() string {
	return entryID(s.candidate(), newUUID, s.ix.Has)
}

// candidate returns the source of candidate entry ids: the injected one,
// or randomID.
func (s *Session) candidate() func() string {
	if s.opts.NewEntryID != nil {
		return s.opts.NewEntryID
	}
	return s.randomID
}

// randomID returns 8 random lower-case hex digits, like pi's
// randomUUID().slice(0, 8), from a per-session generator seeded by
// crypto/rand (one system call per session, not per entry).
func (s *Session) randomID() string {
	if s.rng == nil {
		var seed [32]byte
		_, _ = cryptorand.Read(seed[:])
		s.rng = rand.NewChaCha8(seed)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(s.rng.Uint64()))
	return hex.EncodeToString(b[:])
}

func marshalOpt(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return jsonl.Marshal(v)
}

// AppendMessage appends a message entry holding m and returns its id. m
// is a typed message of package message: *message.User,
// *message.Assistant, *message.ToolResult, ... (message.Decode turns the
// JSON of a message into one, for a caller that holds bytes). It is
// written as pi writes the message (see package message), straight into
// the line.
//
// A message that is not a JSON object with one of the roles pi knows
// (user, assistant, toolResult, bashExecution, custom, branchSummary,
// compactionSummary) is refused and nothing is written: nil, a nil
// pointer, or a *message.Unknown that is not such an object. pi drops
// such a session from its list, or fails to open it. Raw entry lines (for
// replication and importers) go through AppendLines.
func (s *Session) AppendMessage(m message.Message) (string, error) {
	if m == nil {
		return "", errors.New("append message: the message is nil")
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		return "", fmt.Errorf("append message: the message is a nil %T", m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelopeFor(jsonl.TypeMessage, s.msgRoom)
		if err := p.typedMessage(m); err != nil {
			return nil, fmt.Errorf("append message: %w", err)
		}
		if err := checkMessage(p.b.Bytes()[p.meta.MsgStart:p.meta.MsgEnd]); err != nil {
			return nil, fmt.Errorf("append message: %w", err)
		}
		// Shrinks slowly, so that a run of small messages after large ones
		// still leaves the large ones room; at most a line block, so that
		// one huge message does not make the next ones ask for its size (a
		// larger line grows out of the block as it is encoded).
		s.msgRoom = min(lineSlab, max(p.meta.MsgEnd-p.meta.MsgStart, s.msgRoom-s.msgRoom/8))
		return p, nil
	})
}

// checkMessage refuses the JSON of a message that is not an object with
// a role pi knows.
func checkMessage(raw []byte) error {
	if jsonl.KindOf(raw) != KindObject {
		return fmt.Errorf("the message is not a JSON object: %s", clip(raw))
	}
	v, _ := jsonl.Lookup(raw, "role")
	role, ok := jsonl.String(v)
	if !ok {
		return errors.New("the message has no string role")
	}
	switch role {
	case message.RoleUser, message.RoleAssistant, message.RoleToolResult, message.RoleBashExecution,
		message.RoleCustom, message.RoleBranchSummary, message.RoleCompactionSummary, message.RoleSystem:
		return nil
	}
	return fmt.Errorf("role %q is not one of pi's message roles", role)
}

// clip returns the start of b, for an error.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// AppendThinkingLevelChange appends a thinking_level_change entry.
func (s *Session) AppendThinkingLevelChange(level string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelope(jsonl.TypeThinkingLevelChange)
		p.b.String("thinkingLevel", level)
		return p, nil
	})
}

// AppendModelChange appends a model_change entry.
func (s *Session) AppendModelChange(provider, modelID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelope(jsonl.TypeModelChange)
		p.b.String("provider", provider).String("modelId", modelID)
		return p, nil
	})
}

// Compaction is a compaction entry to append (pi's appendCompaction
// arguments). A compaction.Result (from compaction.Compact, Finish or
// FinishSummary) fits into it: Compaction{Summary: res.Summary,
// FirstKeptEntryID: res.FirstKeptEntryID, TokensBefore: res.TokensBefore,
// Details: res.Details}.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	// TokensBefore is written as JSON.stringify writes a number: NaN
	// (compaction.Result's value when pi's estimate is NaN) as null.
	TokensBefore float64
	// Details is any value: a compaction.FileLists for pi's {readFiles,
	// modifiedFiles}, JSON text (json.RawMessage or []byte), or a value
	// encoding/json encodes. nil leaves the member out.
	Details any
	// FromHook, when not nil, is written as fromHook: pi's agent writes
	// false for its own compactions, true for an extension's. nil leaves
	// it out, as pi's appendCompaction without the argument does.
	FromHook *bool
	// RetainNone writes the entry's own id as firstKeptEntryId (pi 1.x's
	// appendCompaction without one): the context keeps nothing from
	// before the compaction but its summary. FirstKeptEntryID is ignored.
	RetainNone bool
	// Usage is what the summary requests spent (pi-ai's usage object,
	// such as a message.Usage); nil leaves the member out.
	Usage any
}

// AppendCompaction appends a compaction entry. firstKeptEntryId is not
// checked, as in pi. As pi 1.x, the entry carries the system messages of
// the current context replayed into one (compaction.CurrentSystemMessage,
// with the entry's time), its systemMessage checkpoint, when the context
// has any.
func (s *Session) AppendCompaction(c Compaction) (string, error) {
	details, err := marshalOpt(c.Details)
	if err != nil {
		return "", fmt.Errorf("append compaction: %w", err)
	}
	usage, err := marshalOpt(c.Usage)
	if err != nil {
		return "", fmt.Errorf("append compaction: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		system := compaction.CurrentSystemMessage(compaction.Build(s.ix, compaction.IndexLeaf(s.ix)).Messages)
		p := s.envelope(jsonl.TypeCompaction)
		first := c.FirstKeptEntryID
		if c.RetainNone {
			first = p.meta.ID
		}
		p.b.String("summary", c.Summary).String("firstKeptEntryId", first).Number("tokensBefore", c.TokensBefore)
		if details != nil {
			p.b.Raw("details", details)
		}
		if usage != nil {
			p.b.Raw("usage", usage)
		}
		if c.FromHook != nil {
			p.b.Bool("fromHook", *c.FromHook)
		}
		if system != nil {
			ms, _ := jsonl.ParseDate(p.meta.Timestamp)
			p.b.Raw("systemMessage", withTimestamp(system, ms))
		}
		return p, nil
	})
}

// withTimestamp is {...obj, timestamp: ms} of a JSON object.
func withTimestamp(obj []byte, ms float64) []byte {
	b := jsonl.NewObject(len(obj) + 16)
	done := false
	_ = jsonl.Members(obj, func(m *jsonl.Member) bool {
		if m.KeyIs("timestamp") {
			if !done {
				b.Number("timestamp", ms)
			}
			done = true
			return true
		}
		b.Raw(m.KeyString(), m.Value)
		return true
	})
	if !done {
		b.Number("timestamp", ms)
	}
	return b.Bytes()
}

// AppendCustomEntry appends a custom entry (extension data the context
// ignores). data nil leaves the member out.
func (s *Session) AppendCustomEntry(customType string, data any) (string, error) {
	raw, err := marshalOpt(data)
	if err != nil {
		return "", fmt.Errorf("append custom entry: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		// pi builds this entry with type, customType and data first.
		p := &pending{meta: jsonl.Built{Type: jsonl.TypeCustom}}
		p.b.Start(256+len(raw)).String("type", jsonl.TypeCustom).String("customType", customType)
		if raw != nil {
			p.b.Raw("data", raw)
		}
		s.envelopeTail(p)
		return p, nil
	})
}

// AppendCustomMessageEntry appends a custom_message entry, which enters
// the context as a message with role "custom". content is a string or an
// array of text/image blocks; details nil leaves the member out.
func (s *Session) AppendCustomMessageEntry(customType string, content any, display bool, details any) (string, error) {
	c, err := jsonl.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("append custom message: %w", err)
	}
	d, err := marshalOpt(details)
	if err != nil {
		return "", fmt.Errorf("append custom message: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := &pending{meta: jsonl.Built{Type: jsonl.TypeCustomMessage}}
		p.b.Start(256+len(c)+len(d)).String("type", jsonl.TypeCustomMessage).String("customType", customType).
			Raw("content", c).Bool("display", display)
		if d != nil {
			p.b.Raw("details", d)
		}
		s.envelopeTail(p)
		return p, nil
	})
}

// AppendLabelChange appends a label entry setting targetID's label (pi's
// appendLabelChange): a label that is not empty sets it, "" clears it,
// written without a label member as pi's own agent clears one. The target
// must exist.
func (s *Session) AppendLabelChange(targetID, label string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		if !s.ix.Has(targetID) {
			return nil, entryNotFound(targetID)
		}
		p := s.envelope(jsonl.TypeLabel)
		p.b.String("targetId", targetID)
		if label != "" {
			p.b.String("label", label)
		}
		return p, nil
	})
}

// AppendSessionInfo appends a session_info entry with the name, its runs
// of line breaks turned into one space (pi 1.x) and trimmed.
// An empty or blank name clears the session's name (pi 0.73.1; pi 0.58.3
// kept the earlier name).
func (s *Session) AppendSessionInfo(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelope(jsonl.TypeSessionInfo)
		p.b.String("name", jsTrim(lineBreaks.ReplaceAllString(name, " ")))
		return p, nil
	})
}

// lineBreaks are the runs of CR and LF pi 1.x turns into one space in a
// session name.
var lineBreaks = regexp.MustCompile(`[\r\n]+`)

// jsTrim is String.prototype.trim.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}
