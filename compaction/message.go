package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// EntryMessage is pi's getMessageFromEntry as compaction uses it: a
// message entry gives its stored message, a custom_message entry a
// message with role "custom", a branch_summary entry one with role
// "branchSummary" (even when its summary is empty, unlike Build), and a
// compaction entry one with role "compactionSummary". Every other entry
// gives nothing.
func EntryMessage(e *tree.Entry) (Message, bool) {
	switch e.Type {
	case jsonl.TypeMessage:
		msg, ok := e.Field("message")
		if !ok || !truthy(msg) {
			return Message{}, false
		}
		return Message{Raw: msg, Entry: e, Stored: true}, true
	case jsonl.TypeCustomMessage:
		b := jsonl.NewObject(128).String("role", "custom")
		for _, k := range []string{"customType", "content", "display", "details"} {
			v, _ := e.Field(k)
			addRaw(b, k, v)
		}
		addTime(b, e)
		return Message{Raw: b.Bytes(), Entry: e}, true
	case jsonl.TypeBranchSummary:
		f := fields(e.Raw, "summary", "fromId")
		b := jsonl.NewObject(64+len(f[0])).String("role", "branchSummary")
		addRaw(b, "summary", f[0])
		addRaw(b, "fromId", f[1])
		addTime(b, e)
		return Message{Raw: b.Bytes(), Entry: e}, true
	case jsonl.TypeCompaction:
		f := fields(e.Raw, "summary", "tokensBefore")
		b := jsonl.NewObject(64+len(f[0])).String("role", "compactionSummary")
		addRaw(b, "summary", f[0])
		addRaw(b, "tokensBefore", f[1])
		addTime(b, e)
		return Message{Raw: b.Bytes(), Entry: e}, true
	}
	return Message{}, false
}

// branchEntryMessage is the branch-summarisation variant of EntryMessage:
// tool results give nothing (a branch summary sees tool calls, never their
// output).
func branchEntryMessage(e *jsonl.Entry) (Message, bool) {
	m, ok := EntryMessage(e)
	if ok && m.Stored && roleOf(m.Raw) == "toolResult" {
		return Message{}, false
	}
	return m, ok
}
