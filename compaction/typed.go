package compaction

import (
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/tree"
)

// Model names the model a context was last set to: the provider and
// model id of the last model_change or assistant message on the path.
type Model struct {
	Provider string
	ModelID  string
}

// Decode returns the message as a typed value (see package message): a
// *message.User, *message.Assistant, ... or a *message.Unknown for other
// roles. It fails only when Raw is not a JSON object (a stored message pi
// would still hand to the model as it is).
func (m Message) Decode() (message.Message, error) { return message.Decode(m.Raw) }

// TypedMessages returns the context's messages decoded (Message.Decode),
// in order. A stored message that is not an object fails the call with an
// error naming its entry.
func (c Context) TypedMessages() ([]message.Message, error) {
	out := make([]message.Message, 0, len(c.Messages))
	for _, m := range c.Messages {
		t, err := m.Decode()
		if err != nil {
			if m.Entry != nil {
				return nil, fmt.Errorf("decode message of entry %s (line %d): %w", m.Entry.ID, m.Entry.Line, err)
			}
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// CurrentModel returns the context's model; ok is false when none was set
// on the path (pi's null). A member that is not a string is "".
func (c Context) CurrentModel() (m Model, ok bool) {
	if c.Model == nil {
		return Model{}, false
	}
	p, _ := jsonl.Lookup(c.Model, "provider")
	id, _ := jsonl.Lookup(c.Model, "modelId")
	m.Provider, _ = jsonl.String(p)
	m.ModelID, _ = jsonl.String(id)
	return m, true
}

// Thinking returns the context's thinking level ("off" when none was set
// on the path). A level that is not a string is returned as its JSON.
func (c Context) Thinking() string {
	if c.ThinkingLevel == nil {
		return "off"
	}
	if s, ok := jsonl.String(c.ThinkingLevel); ok {
		return s
	}
	return string(c.ThinkingLevel)
}

// LatestCompactionEntry returns the last compaction entry of entries
// (pi's getLatestCompactionEntry), or false when there is none. pi's
// agent calls it on a branch (engine.Session.BranchPath("")).
func LatestCompactionEntry(entries []*tree.Entry) (*tree.Entry, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type == jsonl.TypeCompaction {
			return entries[i], true
		}
	}
	return nil, false
}
