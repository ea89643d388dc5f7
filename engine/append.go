package engine

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/internal/jsonl"
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

// message adds the "message" member, encoding the JSON text raw as
// JSON.stringify would straight into the line, and records where the value
// is.
func (p *pending) message(raw []byte) error {
	p.b.Grow(len(raw) + 16)
	start := p.b.Len() + len(`,"message":`) // a message always follows other members
	if err := p.b.Canonical("message", raw); err != nil {
		return err
	}
	p.meta.MsgStart, p.meta.MsgEnd = start, p.b.Len()
	return nil
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
	return entryID(s.candidate(), NewUUID, s.ix.Has)
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

// AppendMessage appends a message entry holding msg and returns its id:
// a typed message of package message (*message.User, *message.Assistant,
// ...), JSON text (json.RawMessage or []byte), or any other value
// encoding/json encodes to a message object. The message is stored as
// given, without validation.
func (s *Session) AppendMessage(msg any) (string, error) {
	if m, ok := msg.(message.Message); ok {
		return s.appendTyped(m)
	}
	raw, isJSON := jsonText(msg)
	if !isJSON {
		var err error
		if raw, err = jsonl.Marshal(msg); err != nil {
			return "", fmt.Errorf("append message: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelopeFor(jsonl.TypeMessage, len(raw))
		if err := p.message(raw); err != nil {
			return nil, fmt.Errorf("append message: %w", err)
		}
		return p, nil
	})
}

// appendTyped is AppendMessage of a typed message, encoded straight into
// the line: the size of the line is not known before, so it asks for room
// for about the size of the recent messages.
func (s *Session) appendTyped(m message.Message) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelopeFor(jsonl.TypeMessage, s.msgRoom)
		if err := p.typedMessage(m); err != nil {
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

// jsonText returns v when it is JSON text (json.RawMessage or []byte),
// which can be encoded straight into the line.
func jsonText(v any) ([]byte, bool) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, true
	case []byte:
		return x, true
	}
	return nil, false
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

// Compaction is a compaction entry to append.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     float64
	// Details is any value (compaction.FileLists for pi's
	// {readFiles, modifiedFiles}); nil leaves the member out.
	Details any
	// Hook is the fromHook member: FlagAbsent (the zero value) leaves it
	// out, FlagFalse and FlagTrue write false and true.
	Hook Flag
	// FromHook, when not nil, is written as fromHook in place of Hook.
	//
	// Deprecated: use Hook, which needs no pointer.
	FromHook *bool
}

// Flag is an optional boolean member of an entry, with pi's three cases:
// left out (JavaScript's undefined), false or true.
type Flag uint8

// The values of a Flag.
const (
	FlagAbsent Flag = iota // the member is left out
	FlagFalse              // "member":false
	FlagTrue               // "member":true
)

// FlagOf returns FlagTrue or FlagFalse.
func FlagOf(b bool) Flag {
	if b {
		return FlagTrue
	}
	return FlagFalse
}

// add writes the member when the flag is not absent.
func (f Flag) add(b *jsonl.ObjectBuilder, key string) {
	if f != FlagAbsent {
		b.Bool(key, f == FlagTrue)
	}
}

// flagOf is the Flag of a deprecated *bool.
func flagOf(p *bool, f Flag) Flag {
	if p != nil {
		return FlagOf(*p)
	}
	return f
}

// AppendCompaction appends a compaction entry. firstKeptEntryId is not
// checked, as in pi.
func (s *Session) AppendCompaction(c Compaction) (string, error) {
	details, err := marshalOpt(c.Details)
	if err != nil {
		return "", fmt.Errorf("append compaction: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelope(jsonl.TypeCompaction)
		p.b.String("summary", c.Summary).String("firstKeptEntryId", c.FirstKeptEntryID).Number("tokensBefore", c.TokensBefore)
		if details != nil {
			p.b.Raw("details", details)
		}
		flagOf(c.FromHook, c.Hook).add(&p.b, "fromHook")
		return p, nil
	})
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

// AppendLabelChange appends a label entry for targetID: a non-empty label
// sets it, "" or nil clears it (nil leaves the member out, "" writes
// "label":""). The target must exist. SetLabel and ClearLabel need no
// pointer.
func (s *Session) AppendLabelChange(targetID string, label *string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		if !s.ix.Has(targetID) {
			return nil, entryNotFound(targetID)
		}
		p := s.envelope(jsonl.TypeLabel)
		p.b.String("targetId", targetID)
		if label != nil {
			p.b.String("label", *label)
		}
		return p, nil
	})
}

// SetLabel appends a label entry setting targetID's label (pi's
// appendLabelChange(targetId, label)). An empty label writes "label":""
// and clears the label. The target must exist.
func (s *Session) SetLabel(targetID, label string) (string, error) {
	return s.AppendLabelChange(targetID, &label)
}

// ClearLabel appends a label entry without a label, which clears
// targetID's label (pi's appendLabelChange(targetId, undefined)). The
// target must exist.
func (s *Session) ClearLabel(targetID string) (string, error) {
	return s.AppendLabelChange(targetID, nil)
}

// AppendSessionInfo appends a session_info entry with the trimmed name.
// An empty or blank name clears the session's name (pi 0.73.1; pi 0.58.3
// kept the earlier name).
func (s *Session) AppendSessionInfo(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelope(jsonl.TypeSessionInfo)
		p.b.String("name", jsTrim(name))
		return p, nil
	})
}

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
