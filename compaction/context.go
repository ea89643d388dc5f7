package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// Message is one message of a built context: the JSON object pi's
// buildSessionContext returns, as bytes.
type Message struct {
	// Raw is the message object. For a message entry it is the stored
	// "message" value exactly as read; for the synthesised roles
	// (compactionSummary, branchSummary, custom) it is built like pi does.
	Raw []byte
	// Entry is the entry the message came from.
	Entry *tree.Entry
	// Stored is true when Raw is the stored message of a "message" entry.
	Stored bool
}

// Context is what gets sent to the model: pi's SessionContext.
type Context struct {
	Messages []Message
	// ThinkingLevel is the JSON value of the last thinking_level_change on
	// the path, or "off".
	ThinkingLevel []byte
	// Model is the JSON object {"provider","modelId"} of the last
	// model_change or assistant message on the path, or nil for null.
	Model []byte
}

// offLevel is the default thinking level.
var offLevel = []byte(`"off"`)

// Leaf says which entry a context is built for: an entry id (LeafID;
// an unknown or empty id falls back to the last entry), the explicit
// null leaf (NullLeaf), or none given (the zero Leaf): the last entry in
// file order.
type Leaf struct {
	id   string
	null bool
}

// LeafID returns a Leaf naming an entry id.
func LeafID(id string) Leaf { return Leaf{id: id} }

// NullLeaf returns the explicit null leaf: its context is always empty.
func NullLeaf() Leaf { return Leaf{null: true} }

// IndexLeaf returns the leaf ix holds (tree.Index.Leaf: an id, the
// explicit null leaf, or none given) as a Leaf.
func IndexLeaf(ix *tree.Index) Leaf {
	switch id, kind := ix.Leaf(); kind {
	case jsonl.KindNull:
		return NullLeaf()
	case jsonl.KindString:
		return LeafID(id)
	}
	return Leaf{}
}

// ID returns the entry id the leaf names; "" for the null leaf and for
// none given.
func (l Leaf) ID() string { return l.id }

// IsNull reports whether l is the explicit null leaf.
func (l Leaf) IsNull() bool { return l.null }

// Build returns the context for leaf over the entries of ix, exactly as pi's
// buildSessionContext(entries, leafId, byId) does:
//
//  1. an explicit null leaf gives no messages, thinking "off", model null;
//  2. the leaf entry is the entry with the leaf's id when the id is
//     non-empty and known, otherwise the last entry in file order (which may
//     be on another branch); no entries give the empty context;
//  3. the path runs from the root to that entry;
//  4. thinking level and model come from the last thinking_level_change,
//     and the last model_change or assistant message, on the path;
//  5. the messages are pi 1.x's projection (buildSessionProjection):
//     without a compaction on the path every entry converts to its
//     messages; with one, the latest compaction's systemMessage (when it
//     has one) and summary come first, then the path entries before it
//     from its firstKeptEntryId on (system messages skipped; none for a
//     retain-none compaction), then the entries after it; the newest
//     context_edit among those entries of each target omits or replaces
//     the target's messages.
func Build(ix *tree.Index, leaf Leaf) Context {
	ctx, _ := BuildLoad(ix, leaf, nil)
	return ctx
}

// BuildLoad is Build over an index whose entries may be detached (parsed
// without their bytes): see FromPathLoad.
func BuildLoad(ix *tree.Index, leaf Leaf, load func([]*tree.Entry) error) (Context, error) {
	if leaf.null {
		return Context{ThinkingLevel: offLevel}, nil
	}
	entries := ix.Entries()
	if len(entries) == 0 {
		return Context{ThinkingLevel: offLevel}, nil
	}
	var start *jsonl.Entry
	if leaf.id != "" {
		start, _ = ix.Get(leaf.id)
	}
	if start == nil {
		start = entries[len(entries)-1]
	}
	return FromPathLoad(ix.BranchFrom(start), load)
}

// FromPath builds the context of a root-to-leaf path (steps 4 and 5 of
// Build).
func FromPath(path []*tree.Entry) Context {
	ctx, _ := FromPathLoad(path, nil)
	return ctx
}

// FromPathLoad is FromPath over a path whose entries may be detached
// (parsed without their bytes): it calls load with the detached entries
// whose bytes the context needs, before it reads them, and no other: at
// most twice, first with the few entries that hold the settings and the
// last compaction, then with the entries whose messages the context
// holds, in path order. The first error load returns ends the build and
// is returned.
func FromPathLoad(path []*tree.Entry, load func([]*tree.Entry) error) (Context, error) {
	need := func(es ...*jsonl.Entry) error {
		if load == nil {
			return nil
		}
		var detached []*jsonl.Entry
		for _, e := range es {
			if e != nil && e.Detached() {
				detached = append(detached, e)
			}
		}
		if len(detached) == 0 {
			return nil
		}
		return load(detached)
	}
	ctx := Context{ThinkingLevel: offLevel}
	// The settings are the last ones on the path: find them walking back,
	// so only those few entries are decoded.
	var comp, thinking, model *jsonl.Entry
	for i := len(path) - 1; i >= 0 && (comp == nil || thinking == nil || model == nil); i-- {
		e := path[i]
		switch e.Type {
		case jsonl.TypeThinkingLevelChange:
			if thinking == nil {
				thinking = e
			}
		case jsonl.TypeModelChange:
			if model == nil {
				model = e
			}
		case jsonl.TypeMessage:
			if model == nil && e.HasMessage() && e.Role == "assistant" {
				model = e
			}
		case jsonl.TypeCompaction:
			if comp == nil {
				comp = e
			}
		}
	}
	if err := need(thinking, model, comp); err != nil {
		return ctx, err
	}
	if thinking != nil {
		if v, ok := thinking.Field("thinkingLevel"); ok {
			ctx.ThinkingLevel = v
		} else {
			ctx.ThinkingLevel = nil // undefined: JSON.stringify drops it
		}
	}
	if model != nil {
		if model.Type == jsonl.TypeModelChange {
			p, _ := model.Field("provider")
			m, _ := model.Field("modelId")
			ctx.Model = modelObject(p, m)
		} else {
			p, _ := jsonl.Lookup(model.Message(), "provider")
			m, _ := jsonl.Lookup(model.Message(), "model")
			ctx.Model = modelObject(p, m)
		}
	}
	ces := contextEntries(path)
	if err := need(ces...); err != nil {
		return ctx, err
	}
	ctx.Messages = projectionMessages(project(ces))
	return ctx, nil
}

// sameID reports whether two entries have the same id (both absent counts).
func sameID(a, b *jsonl.Entry) bool {
	return a.IDKind == b.IDKind && a.ID == b.ID
}

// idMatcher returns a test of whether an entry's id equals the raw JSON
// value v (JavaScript ===), where an absent value equals an absent id;
// v is decoded once, not for every entry tested.
func idMatcher(v []byte, present bool) func(e *jsonl.Entry) bool {
	if !present {
		return func(e *jsonl.Entry) bool { return e.IDKind == jsonl.KindAbsent }
	}
	switch jsonl.KindOf(v) {
	case jsonl.KindString:
		s, _ := jsonl.String(v)
		return func(e *jsonl.Entry) bool { return e.IDKind == jsonl.KindString && e.ID == s }
	case jsonl.KindNull:
		// An id of null is never stored: the scanner maps it to KindNull.
		return func(*jsonl.Entry) bool { return false }
	}
	raw := "\x00" + string(v)
	return func(e *jsonl.Entry) bool {
		return e.IDKind != jsonl.KindString && e.IDKind != jsonl.KindAbsent && e.ID == raw
	}
}

func modelObject(provider, modelID []byte) []byte {
	b := jsonl.NewObject(64)
	addRaw(b, "provider", provider)
	addRaw(b, "modelId", modelID)
	return b.Bytes()
}

// addRaw adds a member unless the value is absent (undefined in pi).
func addRaw(b *jsonl.ObjectBuilder, k string, v []byte) {
	if v != nil {
		b.Raw(k, v)
	}
}

// addTime adds "timestamp": new Date(entry.timestamp).getTime(), which is
// null in JSON when the timestamp does not parse.
func addTime(b *jsonl.ObjectBuilder, e *jsonl.Entry) {
	v, ok := e.Field("timestamp")
	if ok && jsonl.KindOf(v) == jsonl.KindString {
		if ms, ok := jsonl.ParseDate(e.Timestamp); ok {
			b.Number("timestamp", ms)
			return
		}
	} else if ok && jsonl.KindOf(v) == jsonl.KindNumber {
		// new Date(number) keeps the number (within the Date range).
		if f, ok := jsonl.Number(v); ok && f >= -8.64e15 && f <= 8.64e15 {
			b.Number("timestamp", float64(int64(f)))
			return
		}
	}
	b.Null("timestamp")
}

// truthy reports JavaScript truthiness of a JSON value.
func truthy(v []byte) bool {
	switch jsonl.KindOf(v) {
	case jsonl.KindAbsent, jsonl.KindNull:
		return false
	case jsonl.KindBool:
		return v[0] == 't'
	case jsonl.KindString:
		return len(v) > 2
	case jsonl.KindNumber:
		f, _ := jsonl.Number(v)
		return f != 0 && f == f
	}
	return true
}
