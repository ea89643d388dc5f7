package engine

import (
	"fmt"
	"strings"

	"github.com/sessctl/sessctl/layout"
)

// Values passed to the Append methods as `any` are encoded with
// layout.Marshal: json.RawMessage and []byte are taken as JSON text, other
// values go through encoding/json; either way the bytes written are what
// JSON.stringify writes (key order kept, no HTML escaping). A nil value
// means "undefined": the member is left out, as pi leaves it out.

// envelope starts an entry line with pi's common prefix: type, id,
// parentId (the current leaf), timestamp.
func (s *Session) envelope(typ string) (*layout.ObjectBuilder, string) {
	id := s.newID()
	b := layout.NewObject(256).String("type", typ).String("id", id)
	s.parentMember(b)
	b.String("timestamp", layout.ISOTime(s.opts.now()))
	return b, id
}

// parentMember adds "parentId": the current leaf, or null.
func (s *Session) parentMember(b *layout.ObjectBuilder) {
	leaf, kind := s.ix.Leaf()
	switch kind {
	case layout.KindString:
		if raw, ok := keyJSON(leaf); ok {
			b.Raw("parentId", raw)
			return
		}
		b.String("parentId", leaf)
	case layout.KindAbsent:
		// pi writes parentId: undefined, which JSON.stringify drops.
	default:
		b.Null("parentId")
	}
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
	return entryID(s.opts.entryCandidate, NewUUID, s.ix.Has)
}

func marshalOpt(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return layout.Marshal(v)
}

// AppendMessage appends a message entry holding msg (a user, assistant,
// toolResult, bashExecution or any other message object) and returns its
// id. The message is stored as given, without validation.
func (s *Session) AppendMessage(msg any) (string, error) {
	raw, err := layout.Marshal(msg)
	if err != nil {
		return "", fmt.Errorf("append message: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := s.envelope(layout.TypeMessage)
	return s.appendLine(b.Raw("message", raw).Bytes())
}

// AppendThinkingLevelChange appends a thinking_level_change entry.
func (s *Session) AppendThinkingLevelChange(level string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := s.envelope(layout.TypeThinkingLevelChange)
	return s.appendLine(b.String("thinkingLevel", level).Bytes())
}

// AppendModelChange appends a model_change entry.
func (s *Session) AppendModelChange(provider, modelID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := s.envelope(layout.TypeModelChange)
	return s.appendLine(b.String("provider", provider).String("modelId", modelID).Bytes())
}

// Compaction is a compaction entry to append.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     float64
	Details          any   // nil: left out
	FromHook         *bool // nil: left out
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
	b, _ := s.envelope(layout.TypeCompaction)
	b.String("summary", c.Summary).String("firstKeptEntryId", c.FirstKeptEntryID).Number("tokensBefore", c.TokensBefore)
	if details != nil {
		b.Raw("details", details)
	}
	if c.FromHook != nil {
		b.Bool("fromHook", *c.FromHook)
	}
	return s.appendLine(b.Bytes())
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
	// pi builds this entry with type, customType and data first.
	b := layout.NewObject(256).String("type", layout.TypeCustom).String("customType", customType)
	if raw != nil {
		b.Raw("data", raw)
	}
	b.String("id", s.newID())
	s.parentMember(b)
	b.String("timestamp", layout.ISOTime(s.opts.now()))
	return s.appendLine(b.Bytes())
}

// AppendCustomMessageEntry appends a custom_message entry, which enters
// the context as a message with role "custom". content is a string or an
// array of text/image blocks; details nil leaves the member out.
func (s *Session) AppendCustomMessageEntry(customType string, content any, display bool, details any) (string, error) {
	c, err := layout.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("append custom message: %w", err)
	}
	d, err := marshalOpt(details)
	if err != nil {
		return "", fmt.Errorf("append custom message: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := layout.NewObject(256).String("type", layout.TypeCustomMessage).String("customType", customType).
		Raw("content", c).Bool("display", display)
	if d != nil {
		b.Raw("details", d)
	}
	b.String("id", s.newID())
	s.parentMember(b)
	b.String("timestamp", layout.ISOTime(s.opts.now()))
	return s.appendLine(b.Bytes())
}

// AppendLabelChange appends a label entry for targetID: a non-empty label
// sets it, "" or nil clears it (nil leaves the member out, "" writes
// "label":""). The target must exist.
func (s *Session) AppendLabelChange(targetID string, label *string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return "", err
	}
	if !s.ix.Has(targetID) {
		return "", entryNotFound(targetID)
	}
	b, _ := s.envelope(layout.TypeLabel)
	b.String("targetId", targetID)
	if label != nil {
		b.String("label", *label)
	}
	return s.appendLine(b.Bytes())
}

// AppendSessionInfo appends a session_info entry with the trimmed name.
// An empty name is written but never clears an earlier one (pi 0.58.3).
func (s *Session) AppendSessionInfo(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := s.envelope(layout.TypeSessionInfo)
	return s.appendLine(b.String("name", jsTrim(name)).Bytes())
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
