package engine

import (
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// AppendUsage appends a usage entry (pi 1.x's appendUsage): usage and
// cost a model spent that is not model context, such as a summary
// request's. kind says what it was for ("compaction", "branch_summary",
// ...), provider and model who spent it; usage is pi-ai's usage object
// (message.Usage, or any value that encodes to JSON); note "" leaves the
// note out. The context ignores the entry; stats count it.
func (s *Session) AppendUsage(kind, provider, model string, usage any, note string) (string, error) {
	u, err := jsonl.Marshal(usage)
	if err != nil {
		return "", fmt.Errorf("append usage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		p := s.envelopeFor(jsonl.TypeUsage, len(u))
		p.b.String("kind", kind).String("provider", provider).String("model", model).Raw("usage", u)
		if note != "" {
			p.b.String("note", note)
		}
		return p, nil
	})
}

// errNotEditable is why a context edit is refused.
var errNotEditable = errors.New("does not contribute editable model content")

// AppendContextEdit appends a context_edit entry (pi 1.x's
// appendContextEdit): from then on the model's context, on this branch,
// leaves out the message of entry targetID (content nil) or carries
// content in place of its content (a string, or an array of text and
// image blocks; a string becomes one text block for an assistant message
// or a tool result, as pi writes it). The history is unchanged: the
// entry stays in the file, and Entries, Tree and the exports still show
// it. As pi, it refuses a target that is not on the active branch (the
// path to the leaf) or that gives no editable content: only custom_message
// entries and user, assistant and tool result messages can be edited.
func (s *Session) AppendContextEdit(targetID string, content any) (string, error) {
	var rep []byte
	if content != nil {
		c, err := jsonl.Marshal(content)
		if err != nil {
			return "", fmt.Errorf("append context edit: %w", err)
		}
		if k := jsonl.KindOf(c); k != jsonl.KindString && k != jsonl.KindArray {
			return "", fmt.Errorf("append context edit: the replacement content must be a string or an array of blocks")
		}
		rep = c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		target, ok := s.ix.Get(targetID)
		if !ok {
			return nil, entryNotFound(targetID)
		}
		onBranch := false
		for _, e := range s.ix.LeafBranch() {
			if e == target {
				onBranch = true
				break
			}
		}
		if !onBranch {
			return nil, fmt.Errorf("append context edit: entry %s is not on the active branch", targetID)
		}
		role := "custom"
		switch {
		case target.Type == jsonl.TypeCustomMessage:
		case target.Type == jsonl.TypeMessage && target.HasMessage() &&
			(target.Role == "user" || target.Role == "assistant" || target.Role == "toolResult"):
			role = target.Role
		default:
			return nil, fmt.Errorf("append context edit: entry %s %w", targetID, errNotEditable)
		}
		replacement := []byte("null")
		if rep != nil {
			c := rep
			if (role == "assistant" || role == "toolResult") && jsonl.KindOf(c) == jsonl.KindString {
				c = append(append([]byte(`[{"type":"text","text":`), c...), "}]"...)
			}
			replacement = jsonl.NewObject(len(c)+16).Raw("content", c).Bytes()
		}
		p := s.envelopeFor(jsonl.TypeContextEdit, len(replacement)+len(targetID))
		p.b.String("targetId", targetID).Raw("replacement", replacement)
		return p, nil
	})
}
