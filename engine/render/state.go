package render

import (
	"bufio"
	"io"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// StateOptions select the optional parts of State.
type StateOptions struct {
	// Dir is written as sessionDir; "" writes the directory of the
	// session's file ("" in memory). A session opened with
	// engine.OpenOptions.Dir has that directory as its session directory
	// instead, which only its opener knows.
	Dir string
	// ContextByLeaf adds "contextByLeaf" (the context at every entry, with
	// stored messages written as {"entry": id}) and "contextAtNullLeaf".
	// Its size grows with the square of the session length.
	ContextByLeaf bool
	// Info adds "sessionInfo", the listing fields of the file as it is on
	// disk (null when the file is not listed).
	Info *engine.Info
	// NoInfo writes "sessionInfo": null.
	NoInfo bool
	// Fields, when not nil, limits the object to these top-level fields
	// (for example leafId, branch and context of a session too deep for a
	// tool that cannot read a deeply nested "tree").
	Fields map[string]bool
}

// StateFields returns the names of the top-level fields State writes
// with the options o (Fields aside), in their order: sessionId through
// context, then contextByLeaf and contextAtNullLeaf with ContextByLeaf,
// then sessionInfo with Info or NoInfo. A caller checks a Fields set
// against it.
func StateFields(o StateOptions) []string {
	names := []string{"sessionId", "sessionFile", "sessionDir", "cwd", "isPersisted",
		"header", "leafId", "leafEntryId", "sessionName", "entries", "branch", "tree",
		"children", "labels", "context"}
	if o.ContextByLeaf {
		names = append(names, "contextByLeaf", "contextAtNullLeaf")
	}
	if o.Info != nil || o.NoInfo {
		names = append(names, "sessionInfo")
	}
	return names
}

// State writes the session's state object, the JSON shape of the pi
// conformance corpus: sessionId, sessionFile, sessionDir, cwd,
// isPersisted, header, leafId ("<undefined>" when the last line has no
// id), leafEntryId, sessionName, entries (stored bytes), branch, tree,
// children, labels, context, and optionally contextByLeaf,
// contextAtNullLeaf and sessionInfo, followed by a newline. Large
// sessions stream: nothing but the session's index is held in memory.
func State(w io.Writer, s *engine.Session, o StateOptions) error {
	id, file, cwd, persisted := s.SessionID(), s.SessionFile(), s.Cwd(), s.IsPersisted()
	header := s.Header().Entry.Raw
	dir := o.Dir
	if dir == "" && file != "" {
		dir = filepath.Dir(file)
	}
	var err error
	s.Index(func(ix *tree.Index) { err = writeState(w, ix, o, id, file, dir, cwd, persisted, header) })
	return err
}

// writeState is State under the session's lock.
func writeState(w io.Writer, ix *tree.Index, o StateOptions, id, file, dir, cwd string, persisted bool, header []byte) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	j := &jw{w: bw}
	leaf, kind := ix.Leaf()
	nullOr := func(ok bool, f func()) {
		if ok {
			f()
		} else {
			j.raw("null")
		}
	}
	type field struct {
		name  string
		write func()
	}
	fields := []field{
		{"sessionId", func() { j.str(id) }},
		{"sessionFile", func() { nullOr(persisted, func() { j.str(file) }) }},
		{"sessionDir", func() { j.str(dir) }},
		{"cwd", func() { j.str(cwd) }},
		{"isPersisted", func() { j.bool(persisted) }},
		{"header", func() { j.rawb(header) }},
		{"leafId", func() {
			switch kind {
			case engine.KindString:
				j.id(leaf)
			case engine.KindAbsent:
				j.str("<undefined>")
			default:
				j.raw("null")
			}
		}},
		{"leafEntryId", func() {
			e, ok := ix.LeafEntry()
			nullOr(ok && e.IDKind != engine.KindAbsent, func() { j.id(tree.Key(e)) })
		}},
		{"sessionName", func() {
			n, ok := ix.Name()
			nullOr(ok, func() { j.str(n) })
		}},
		{"entries", func() {
			j.open('[')
			for _, e := range ix.Entries() {
				j.elem()
				j.rawb(e.Raw)
			}
			j.close(']')
		}},
		{"branch", func() {
			j.open('[')
			for _, e := range ix.LeafBranch() {
				j.elem()
				j.entryID(e)
			}
			j.close(']')
		}},
		{"tree", func() { writeStateTree(j, ix.Tree()) }},
		{"children", func() {
			j.open('{')
			for _, id := range ix.IDs() {
				if id == absentID {
					continue
				}
				j.key(jsonl.KeyString(id))
				j.open('[')
				for _, c := range ix.Children(id) {
					j.elem()
					j.id(c)
				}
				j.close(']')
			}
			j.close('}')
		}},
		{"labels", func() {
			j.open('{')
			for _, id := range ix.IDs() {
				if l, ok := ix.Label(id); ok {
					j.key(jsonl.KeyString(id))
					j.str(l)
				}
			}
			j.close('}')
		}},
		{"context", func() {
			writeContext(j, compaction.Build(ix, compaction.IndexLeaf(ix)), false)
		}},
	}
	if o.ContextByLeaf {
		fields = append(fields, field{"contextByLeaf", func() {
			j.open('{')
			for _, id := range ix.IDs() {
				if id == absentID {
					continue
				}
				j.key(jsonl.KeyString(id))
				writeContext(j, compaction.Build(ix, compaction.LeafID(id)), true)
			}
			j.close('}')
		}}, field{"contextAtNullLeaf", func() { writeContext(j, compaction.Build(ix, compaction.NullLeaf()), false) }})
	}
	if o.Info != nil || o.NoInfo {
		fields = append(fields, field{"sessionInfo", func() {
			nullOr(o.Info != nil, func() {
				head, rest := o.Info.AppendJSON(nil)
				j.rawb(head)
				j.rawb(rest)
				j.first = false
			})
		}})
	}
	j.open('{')
	for _, f := range fields {
		if o.Fields != nil && !o.Fields[f.name] {
			continue
		}
		j.key(f.name)
		f.write()
	}
	j.close('}')
	j.raw("\n")
	if j.err != nil {
		return j.err
	}
	return bw.Flush()
}

// absentID is the index key of entries without an id.
var absentID = func() string {
	e := engine.Entry{IDKind: engine.KindAbsent}
	return tree.Key(&e)
}()

// writeStateTree writes pi's getTree: {id, type, label?, labelTimestamp?,
// children}.
func writeStateTree(j *jw, roots []*tree.Node) {
	j.open('[')
	tree.Walk(roots, func(n *tree.Node, _ int) bool {
		j.elem()
		j.open('{')
		j.key("id")
		if n.Entry.IDKind == engine.KindAbsent {
			j.raw("null")
		} else {
			j.id(n.Key)
		}
		if t, ok := n.Entry.Field("type"); ok {
			j.key("type")
			j.rawb(t)
		}
		if n.HasLabel {
			j.key("label")
			j.str(n.Label)
			if n.LabelTimestamp != nil {
				j.key("labelTimestamp")
				j.rawb(n.LabelTimestamp)
			}
		}
		j.key("children")
		j.open('[')
		return true
	}, func(*tree.Node, int) {
		j.close(']')
		j.close('}')
	})
	j.close(']')
}

// writeContext writes {"messages","thinkingLevel","model"}; byRef writes
// stored messages as {"entry": id}.
func writeContext(j *jw, c compaction.Context, byRef bool) {
	j.open('{')
	j.key("messages")
	j.open('[')
	for _, m := range c.Messages {
		j.elem()
		if byRef && m.Stored {
			j.open('{')
			j.key("entry")
			j.entryID(m.Entry)
			j.close('}')
		} else {
			j.rawb(m.Raw)
		}
	}
	j.close(']')
	if c.ThinkingLevel != nil {
		j.key("thinkingLevel")
		j.rawb(c.ThinkingLevel)
	}
	j.key("model")
	if c.Model == nil {
		j.raw("null")
	} else {
		j.rawb(c.Model)
	}
	j.close('}')
}

// Context writes a context as pi's buildSessionContext returns it:
// {"messages": [...], "thinkingLevel": ..., "model": ...}, followed by a
// newline.
func Context(w io.Writer, c compaction.Context) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	j := &jw{w: bw}
	writeContext(j, c, false)
	j.raw("\n")
	if j.err != nil {
		return j.err
	}
	return bw.Flush()
}

// Info writes one listing row as pi's list() element JSON: path, id, cwd,
// name (when set), parentSessionPath (when set), created, modified (ISO
// strings; null for an invalid date), messageCount, firstMessage,
// allMessagesText.
func Info(w io.Writer, in *engine.Info) error {
	var buf [512]byte
	head, rest := in.AppendJSON(buf[:0])
	// The rest goes out as it is: no copy of the (large) text.
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err := w.Write(rest)
	return err
}

// jw is a tiny streaming JSON writer for the state object.
type jw struct {
	w     *bufio.Writer
	first bool
	err   error
}

func (j *jw) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jw) rawb(b []byte) {
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
}

func (j *jw) open(c byte) {
	j.rawb([]byte{c})
	j.first = true
}

func (j *jw) close(c byte) {
	j.rawb([]byte{c})
	j.first = false
}

// elem writes the comma before an array element.
func (j *jw) elem() {
	if !j.first {
		j.raw(",")
	}
	j.first = false
}

func (j *jw) key(k string) {
	j.elem()
	j.rawb(jsonl.AppendString(nil, k))
	j.raw(":")
	j.first = false
}

func (j *jw) str(s string) {
	j.rawb(jsonl.AppendString(nil, s))
	j.first = false
}

func (j *jw) bool(b bool) {
	if b {
		j.raw("true")
	} else {
		j.raw("false")
	}
	j.first = false
}

// id writes an index key as JSON: a string id, or a non-string id's
// text (kept as "\x00" followed by it).
func (j *jw) id(k string) {
	if len(k) > 0 && k[0] == 0 {
		j.raw(k[1:])
	} else {
		j.str(k)
	}
	j.first = false
}

func (j *jw) entryID(e *engine.Entry) {
	if e.IDKind == engine.KindAbsent {
		j.raw("null")
		j.first = false
		return
	}
	j.id(tree.Key(e))
}
