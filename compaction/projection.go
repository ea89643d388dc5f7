package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
)

// pi 1.x builds the model context as a projection of the entries
// (session-manager.js: buildContextEntries, sessionEntryToContextMessages,
// projectContextEntry, buildSessionProjection); compaction's preparation
// works on the same projection. This file is that projection.

// projected is one entry of the projection: a context entry and the
// messages it contributes to the model context (none for an omitted
// entry, an older compaction or an entry that is no message).
type projected struct {
	e    *jsonl.Entry
	msgs []Message
}

// contextEntries is pi 1.x's buildContextEntries over a root-to-leaf
// path: the path itself without a compaction on it; with one, the newest
// compaction, the path entries before it from its firstKeptEntryId on
// (system-role messages skipped: the compaction's systemMessage carries
// them), then the entries after it. A compaction whose firstKeptEntryId
// is its own id, or not on the path, keeps nothing before it
// (retain-none).
func contextEntries(path []*jsonl.Entry) []*jsonl.Entry {
	var comp *jsonl.Entry
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == jsonl.TypeCompaction {
			comp = path[i]
			break
		}
	}
	if comp == nil {
		return path
	}
	compIdx := -1
	for i, e := range path {
		if sameID(e, comp) {
			compIdx = i
			break
		}
	}
	if compIdx < 0 {
		return path
	}
	out := make([]*jsonl.Entry, 0, len(path)-compIdx)
	out = append(out, comp)
	firstKept, has := comp.Field("firstKeptEntryId")
	isFirstKept := idMatcher(firstKept, has)
	found := false
	for _, e := range path[:compIdx] {
		if !found && isFirstKept(e) {
			found = true
		}
		if found && !(e.Type == jsonl.TypeMessage && e.HasMessage() && e.Role == "system") {
			out = append(out, e)
		}
	}
	return append(out, path[compIdx+1:]...)
}

// project is pi 1.x's buildSessionProjection over context entries
// (contextEntries), whose bytes must be loaded: each entry with its
// messages, the newest context_edit of an entry among them applied
// (omitted, or its content replaced); only the first entry, the newest
// compaction, contributes a summary (an older compaction in its kept
// range contributes nothing).
func project(ces []*jsonl.Entry) []projected {
	var edits map[string]*jsonl.Entry
	for _, e := range ces {
		if e.Type == jsonl.TypeContextEdit {
			if edits == nil {
				edits = map[string]*jsonl.Entry{}
			}
			v, ok := e.Field("targetId")
			edits[valueKey(v, ok)] = e
		}
	}
	out := make([]projected, len(ces))
	for i, e := range ces {
		out[i].e = e
		if e.Type == jsonl.TypeCompaction && i > 0 {
			continue
		}
		msgs := entryMessages(e)
		if ed := edits[entryKey(e)]; ed != nil {
			msgs = applyEdit(msgs, ed)
		}
		out[i].msgs = msgs
	}
	return out
}

// projectionMessages returns the messages of a projection, in order.
func projectionMessages(ps []projected) []Message {
	n := 0
	for _, p := range ps {
		n += len(p.msgs)
	}
	out := make([]Message, 0, n)
	for _, p := range ps {
		out = append(out, p.msgs...)
	}
	return out
}

// entryMessages is pi 1.x's sessionEntryToContextMessages: a message
// entry gives its message (a system message without content gets content
// "", a user, assistant or tool result message without content gets
// content []), a custom_message entry a "custom" message (content [] when
// it has none), a branch_summary with a summary a "branchSummary"
// message, a compaction its systemMessage checkpoint (when it has one)
// and a "compactionSummary" message; every other entry nothing.
func entryMessages(e *jsonl.Entry) []Message {
	switch e.Type {
	case jsonl.TypeMessage:
		msg := e.Message()
		if msg == nil {
			// Not an object: pi returns whatever is stored (undefined
			// becomes null in JSON).
			v, ok := e.Field("message")
			if !ok {
				v = []byte("null")
			}
			return []Message{{Raw: v, Entry: e, Stored: true}}
		}
		content, has := jsonl.Lookup(msg, "content")
		if !has || jsonl.KindOf(content) == jsonl.KindNull {
			switch roleOf(msg) {
			case "system":
				return []Message{{Raw: withContent(msg, []byte(`""`)), Entry: e}}
			case "user", "assistant", "toolResult":
				return []Message{{Raw: withContent(msg, []byte(`[]`)), Entry: e}}
			}
		}
		return []Message{{Raw: msg, Entry: e, Stored: true}}
	case jsonl.TypeCustomMessage:
		b := jsonl.NewObject(128).String("role", "custom")
		f := fields(e.Raw, "customType", "content", "display", "details")
		addRaw(b, "customType", f[0])
		if f[1] == nil || jsonl.KindOf(f[1]) == jsonl.KindNull {
			f[1] = []byte(`[]`)
		}
		addRaw(b, "content", f[1])
		addRaw(b, "display", f[2])
		addRaw(b, "details", f[3])
		addTime(b, e)
		return []Message{{Raw: b.Bytes(), Entry: e}}
	case jsonl.TypeBranchSummary:
		summary, ok := e.Field("summary")
		if !ok || !truthy(summary) {
			return nil
		}
		from, _ := e.Field("fromId")
		b := jsonl.NewObject(64+len(summary)).String("role", "branchSummary")
		addRaw(b, "summary", summary)
		addRaw(b, "fromId", from)
		addTime(b, e)
		return []Message{{Raw: b.Bytes(), Entry: e}}
	case jsonl.TypeCompaction:
		f := fields(e.Raw, "summary", "tokensBefore", "systemMessage")
		b := jsonl.NewObject(64+len(f[0])).String("role", "compactionSummary")
		addRaw(b, "summary", f[0])
		addRaw(b, "tokensBefore", f[1])
		addTime(b, e)
		summary := Message{Raw: b.Bytes(), Entry: e}
		if f[2] != nil && truthy(f[2]) {
			return []Message{{Raw: f[2], Entry: e}, summary}
		}
		return []Message{summary}
	}
	return nil
}

// applyEdit is pi 1.x's projectContextEntry with an edit: a null
// replacement omits the entry's messages; a replacement object gives its
// content to the user, assistant, tool result and custom messages (a
// string as one text block for assistant and tool result messages),
// leaving the others as they are. An edit without a replacement (pi
// throws on it) changes nothing.
func applyEdit(msgs []Message, ed *jsonl.Entry) []Message {
	rep, ok := ed.Field("replacement")
	if !ok {
		return msgs
	}
	if jsonl.KindOf(rep) == jsonl.KindNull {
		return nil
	}
	var content []byte // nil: undefined
	if jsonl.KindOf(rep) == jsonl.KindObject {
		content, _ = jsonl.Lookup(rep, "content")
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		role := roleOf(m.Raw)
		switch role {
		case "user", "assistant", "toolResult", "custom":
		default:
			continue
		}
		c := content
		if (role == "assistant" || role == "toolResult") && jsonl.KindOf(c) == jsonl.KindString {
			c = oneTextBlock(c)
		}
		out[i] = Message{Raw: withContent(m.Raw, c), Entry: m.Entry}
	}
	return out
}

// oneTextBlock is [{"type":"text","text":s}] for the JSON string s.
func oneTextBlock(s []byte) []byte {
	b := make([]byte, 0, len(s)+24)
	b = append(b, `[{"type":"text","text":`...)
	b = append(b, s...)
	return append(b, "}]"...)
}

// withContent is {...obj, content} of the JSON object obj: its members
// in order with the value of "content" replaced where it first occurs
// (later duplicates dropped, as JSON.parse keeps one), or added at the
// end; a nil content (undefined) drops the member.
func withContent(obj, content []byte) []byte {
	b := make([]byte, 0, len(obj)+len(content)+16)
	b = append(b, '{')
	done := false
	first := true
	add := func(key, val []byte) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, val...)
	}
	err := jsonl.Members(obj, func(m *jsonl.Member) bool {
		if m.KeyIs("content") {
			if !done && content != nil {
				add([]byte(`"content"`), content)
			}
			done = true
			return true
		}
		key := make([]byte, 0, len(m.Key)+2)
		key = append(append(append(key, '"'), m.Key...), '"')
		add(key, m.Value)
		return true
	})
	if err != nil {
		return obj
	}
	if !done && content != nil {
		add([]byte(`"content"`), content)
	}
	return append(b, '}')
}

// valueKey is a map key for a JSON value (a context edit's targetId) that
// equals entryKey of the entry whose id is that value (JavaScript ===);
// absent is undefined.
func valueKey(v []byte, present bool) string {
	if !present {
		return "u"
	}
	switch jsonl.KindOf(v) {
	case jsonl.KindString:
		s, _ := jsonl.String(v)
		return "s" + s
	case jsonl.KindNull:
		return "n"
	}
	return "r" + string(v)
}

// entryKey is valueKey of an entry's id.
func entryKey(e *jsonl.Entry) string {
	switch e.IDKind {
	case jsonl.KindAbsent:
		return "u"
	case jsonl.KindString:
		return "s" + e.ID
	case jsonl.KindNull:
		return "n"
	}
	return "r" + jsonl.KeyString(e.ID)
}
