package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// ImportType is the customType of the provenance entry every imported
// session starts with (right after the header, as the root of the tree):
// {"type":"custom","customType":"sessctl-import","data":{"source",
// "sourcePath","sourceId","sourceVersion"?,"parentSourceId"?,"dateFrom"?,
// "promptOnly"?,"digest"},...}. digest is the hex SHA-256 of every line
// after this one (each with its '\n'): a re-import replaces the file only
// while it still matches, that is, while nobody has appended to the
// imported session. dateFrom is "mtime" when the source holds no date,
// so the session's times are its file's modification time; promptOnly is
// true for a session rebuilt from a prompt history without its
// transcript.
const ImportType = "sessctl-import"

// DateFromMtime is the provenance entry's dateFrom when the session's
// times are the source file's modification time.
const DateFromMtime = "mtime"

// UnknownProvider and UnknownModel are the provider and model of an
// imported assistant message whose source does not record them. pi keeps
// both as opaque strings: its footer and cost code read only the usage,
// restoring the model finds no model "unknown" and falls back to the
// default one, and replaying the message to any real model treats it as
// another model's (thinking becomes text, signatures are dropped).
const (
	UnknownProvider = "unknown"
	UnknownModel    = "unknown"
)

// LeafType is the customType of the entry appended when the source's
// active point is an entry that has children in the source (an opencode
// revert, for example): pi's leaf is the last line, so the active point
// gets a child that is written last. data is {"reason"}.
const LeafType = "sessctl-import-leaf"

// Node is one entry of a session being built. Converters create nodes
// through a Builder and pass them back as parents.
type Node struct {
	key    string
	parent *Node
	time   time.Time
	typ    string

	msg  []byte // message
	data []byte // custom: data; custom_message: content
	*nodeExtra

	kids []*Node
	id   string
	sp   *spilled // the content's place in the builder's spill file, or nil
	b    *Builder
}

// nodeExtra holds the fields of the entry types other than message, so
// that a message node, by far the most common, stays small: a session of
// many entries keeps one node for each while it is built.
type nodeExtra struct {
	customType string // custom, custom_message
	display    bool
	details    []byte
	summary    string // compaction
	tokens     float64
	provider   string // model_change
	modelID    string
	level      string // thinking_level_change
}

// Parent returns the node's parent, nil for a root.
func (n *Node) Parent() *Node { return n.parent }

// SetMessage replaces the message object of a message node, for
// converters that complete a message after its children were added (an
// assistant reply spread over several source lines).
func (n *Node) SetMessage(msg []byte) {
	if n.sp != nil {
		n.sp = nil
		n.msg = msg
		n.b.spillNode(n)
		return
	}
	n.b.held -= n.contentSize()
	n.msg = msg
	n.b.hold(n)
}

// IsMessage reports whether the node enters the context as a message (a
// message or custom_message entry).
func (n *Node) IsMessage() bool {
	return n.typ == jsonl.TypeMessage || n.typ == jsonl.TypeCustomMessage
}

// LastDescendant follows the node's last child down to a node without
// children.
func (n *Node) LastDescendant() *Node {
	for len(n.kids) > 0 {
		n = n.kids[len(n.kids)-1]
	}
	return n
}

// Builder assembles the entries of one imported session. Converters add
// nodes in source order, each naming its parent (nil for a root; roots
// hang below the provenance entry). Every node has a key that is unique
// within the session and stable across imports (a source id, or a source
// id plus a suffix); the entry id is derived from it. The parent must
// already exist, so the tree has no cycles.
//
// Finish writes the tree depth first with, at every fork, the branch
// leading to the active leaf last, so the leaf is the last line, as pi
// needs.
type Builder struct {
	source, sourceID string
	sessionID        string
	nodes            []*Node
	keys             map[string]bool
	leaf             *Node
	name             string

	tempDir string // where the spill file goes, "" for os.TempDir()
	held    int64  // content bytes held in memory
	sp      *spill // the content, once it outgrew spillAt
	noSpill bool   // the spill file could not be created
}

// SetTempDir names the directory the builder keeps the content of a large
// session in while it is converted ("" means os.TempDir()), as
// ImportOptions.TempDir says.
func (b *Builder) SetTempDir(dir string) { b.tempDir = dir }

// NewBuilder starts the session with the given source and source id.
func NewBuilder(source, sourceID string) *Builder {
	return &Builder{
		source:    source,
		sourceID:  sourceID,
		sessionID: SessionID(source, sourceID),
		keys:      make(map[string]bool),
	}
}

// SessionID returns the pi session id of the session being built.
func (b *Builder) SessionID() string { return b.sessionID }

// Len returns the number of nodes added.
func (b *Builder) Len() int { return len(b.nodes) }

// Last returns the node added last, or nil.
func (b *Builder) Last() *Node {
	if len(b.nodes) == 0 {
		return nil
	}
	return b.nodes[len(b.nodes)-1]
}

func (b *Builder) add(key string, parent *Node, t time.Time, typ string) *Node {
	if b.keys[key] {
		for i := 1; ; i++ {
			k := key + "\x00" + strconv.Itoa(i)
			if !b.keys[k] {
				key = k
				break
			}
		}
	}
	b.keys[key] = true
	n := &Node{key: key, parent: parent, time: t, typ: typ, b: b}
	if typ != jsonl.TypeMessage {
		n.nodeExtra = new(nodeExtra)
	}
	if parent != nil {
		parent.kids = append(parent.kids, n)
	}
	b.nodes = append(b.nodes, n)
	return n
}

// Message adds a message entry; msg is the message object (user,
// assistant, toolResult, ...).
func (b *Builder) Message(key string, parent *Node, t time.Time, msg []byte) *Node {
	n := b.add(key, parent, t, jsonl.TypeMessage)
	n.msg = msg
	b.hold(n)
	return n
}

// Custom adds a custom entry (kept in the file, not in the context). data
// may be nil.
func (b *Builder) Custom(key string, parent *Node, t time.Time, customType string, data []byte) *Node {
	n := b.add(key, parent, t, jsonl.TypeCustom)
	n.customType, n.data = customType, data
	b.hold(n)
	return n
}

// CustomMessage adds a custom_message entry, which enters the context as
// a message of role custom. content is a JSON string or an array of
// text/image blocks; details may be nil.
func (b *Builder) CustomMessage(key string, parent *Node, t time.Time, customType string, content []byte, display bool, details []byte) *Node {
	n := b.add(key, parent, t, jsonl.TypeCustomMessage)
	n.customType, n.data, n.display, n.details = customType, content, display, details
	b.hold(n)
	return n
}

// Compaction adds a compaction entry. Its firstKeptEntryId is the first
// entry added below it (the context after it then starts with the
// summary and goes on with the entries that follow), or itself when
// nothing follows. details may be nil.
func (b *Builder) Compaction(key string, parent *Node, t time.Time, summary string, tokensBefore float64, details []byte) *Node {
	n := b.add(key, parent, t, jsonl.TypeCompaction)
	n.summary, n.tokens, n.details = summary, tokensBefore, details
	b.hold(n)
	return n
}

// ModelChange adds a model_change entry.
func (b *Builder) ModelChange(key string, parent *Node, t time.Time, provider, modelID string) *Node {
	n := b.add(key, parent, t, jsonl.TypeModelChange)
	n.provider, n.modelID = provider, modelID
	return n
}

// ThinkingLevel adds a thinking_level_change entry.
func (b *Builder) ThinkingLevel(key string, parent *Node, t time.Time, level string) *Node {
	n := b.add(key, parent, t, jsonl.TypeThinkingLevelChange)
	n.level = level
	return n
}

// SetName gives the session a name (a session_info entry right after the
// provenance entry).
func (b *Builder) SetName(name string) { b.name = name }

// SetLeaf names the active leaf. Without it the leaf is the last node
// added, followed down through its last children.
func (b *Builder) SetLeaf(n *Node) { b.leaf = n }

// Meta is what Finish needs besides the nodes.
type Meta struct {
	SourcePath     string
	ReadFrom       string // the file read, when it is not SourcePath (see Imported)
	SourceVersion  string
	ParentSourceID string
	Start          time.Time
	Cwd            string
	CwdKnown       bool
	DateFromFile   bool // Start is the source file's mtime (see Imported)
	PromptOnly     bool // rebuilt from a prompt history (see Imported)
}

// Finish assigns the entry ids and returns the session. The builder must
// not be used afterwards.
func (b *Builder) Finish(m Meta) *Imported {
	s := &Imported{
		Source:         b.source,
		SourceID:       b.sourceID,
		SourcePath:     m.SourcePath,
		ReadFrom:       m.ReadFrom,
		SourceVersion:  m.SourceVersion,
		ParentSourceID: m.ParentSourceID,
		ID:             b.sessionID,
		Start:          m.Start,
		Cwd:            m.Cwd,
		CwdKnown:       m.CwdKnown,
		DateFromFile:   m.DateFromFile,
		PromptOnly:     m.PromptOnly,
		Name:           b.name,
	}

	// The top of the tree: provenance, then the name.
	prov := &Node{key: "\x00import", typ: jsonl.TypeCustom, time: m.Start, nodeExtra: &nodeExtra{customType: ImportType}}
	top := prov
	var order []*Node
	order = append(order, prov)
	if b.name != "" {
		info := &Node{key: "\x00name", typ: jsonl.TypeSessionInfo, time: m.Start, nodeExtra: &nodeExtra{summary: b.name}, parent: prov}
		order = append(order, info)
		top = info
	}

	// The active path.
	leaf := b.leaf
	if leaf == nil && len(b.nodes) > 0 {
		leaf = b.nodes[len(b.nodes)-1].LastDescendant()
	}
	active := make(map[*Node]bool)
	for n := leaf; n != nil; n = n.parent {
		active[n] = true
	}

	// Depth first, the active child of every node last.
	var roots []*Node
	for _, n := range b.nodes {
		if n.parent == nil {
			roots = append(roots, n)
		}
	}
	stack := pushKids(nil, roots, active)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, n)
		stack = pushKids(stack, n.kids, active)
	}
	if leaf != nil && order[len(order)-1] != leaf {
		reason := jsonl.NewObject(64).String("reason", "the source's active point has later entries on another branch").Bytes()
		mark := &Node{key: "\x00leaf", typ: jsonl.TypeCustom, time: leaf.time, nodeExtra: &nodeExtra{customType: LeafType}, data: reason, parent: leaf}
		order = append(order, mark)
	}

	// Ids in file order, collision-checked.
	seen := make(map[string]bool, len(order))
	for _, n := range order {
		n.id = entryID(b.sessionID, n.key, seen)
	}
	parentID := func(n *Node) *string {
		switch {
		case n == prov:
			return nil
		case n.parent == nil:
			return &top.id
		}
		return &n.parent.id
	}
	if b.sp == nil {
		s.Lines = make([][]byte, len(order))
	} else {
		// A large session: its lines go to the spill file after the
		// content they are made of, one at a time.
		s.sp, s.entries, s.body = b.sp, len(order), b.sp.size
	}
	digest := sha256.New()
	for i, n := range order[1:] {
		c, err := b.content(n)
		if err != nil {
			s.err = err
			break
		}
		line := c.line(parentID(n))
		if out, err := jsonl.Canonical(nil, line); err == nil {
			line = out
		}
		if s.sp == nil {
			s.Lines[i+1] = line
		} else {
			s.sp.put(line)
			s.sp.put([]byte{'\n'})
		}
		digest.Write(line)
		digest.Write([]byte{'\n'})
		if n.typ == jsonl.TypeMessage || n.typ == jsonl.TypeCustomMessage {
			s.Messages++
		}
	}
	if s.sp != nil {
		s.bodyLen = s.sp.size - s.body
		if s.err == nil {
			s.err = s.sp.flush()
		}
	}
	data := jsonl.NewObject(256).
		String("source", b.source).
		String("sourcePath", m.SourcePath).
		String("sourceId", b.sourceID)
	if m.SourceVersion != "" {
		data.String("sourceVersion", m.SourceVersion)
	}
	if m.ParentSourceID != "" {
		data.String("parentSourceId", m.ParentSourceID)
	}
	if m.DateFromFile {
		data.String("dateFrom", DateFromMtime)
	}
	if m.PromptOnly {
		data.Bool("promptOnly", true)
	}
	data.String("digest", hex.EncodeToString(digest.Sum(nil)))
	prov.data = data.Bytes()
	if s.sp == nil {
		s.Lines[0] = prov.line(nil)
	} else {
		s.prov = prov.line(nil)
	}
	return s
}

// pushKids pushes kids onto a depth-first stack so that they pop in
// order, the active one last.
func pushKids(stack, kids []*Node, active map[*Node]bool) []*Node {
	var act *Node
	for _, k := range kids {
		if active[k] {
			act = k
		}
	}
	if act != nil {
		stack = append(stack, act)
	}
	for i := len(kids) - 1; i >= 0; i-- {
		if kids[i] != act {
			stack = append(stack, kids[i])
		}
	}
	return stack
}

// entryID derives an 8-hex entry id from the session id and the node key,
// re-hashing with a counter while it collides with an id already given.
func entryID(sessionID, key string, seen map[string]bool) string {
	for attempt := 0; ; attempt++ {
		h := sha256.New()
		h.Write([]byte(sessionID))
		h.Write([]byte{0})
		h.Write([]byte(key))
		if attempt > 0 {
			h.Write([]byte{0})
			h.Write(strconv.AppendInt(nil, int64(attempt), 10))
		}
		id := hex.EncodeToString(h.Sum(nil)[:4])
		if !seen[id] {
			seen[id] = true
			return id
		}
	}
}

// line encodes the node as pi writes an entry of its type.
func (n *Node) line(parent *string) []byte {
	ts := jsonl.ISOTime(n.time)
	env := func(b *jsonl.ObjectBuilder) *jsonl.ObjectBuilder {
		return b.String("id", n.id).StringOrNull("parentId", parent).String("timestamp", ts)
	}
	switch n.typ {
	case jsonl.TypeMessage:
		b := env(jsonl.NewObject(len(n.msg)+96).String("type", n.typ))
		return b.Raw("message", n.msg).Bytes()
	case jsonl.TypeCustom:
		b := jsonl.NewObject(len(n.data)+128).String("type", n.typ).String("customType", n.customType)
		if n.data != nil {
			b.Raw("data", n.data)
		}
		return env(b).Bytes()
	case jsonl.TypeCustomMessage:
		b := jsonl.NewObject(len(n.data)+len(n.details)+128).String("type", n.typ).
			String("customType", n.customType).Raw("content", n.data).Bool("display", n.display)
		if n.details != nil {
			b.Raw("details", n.details)
		}
		return env(b).Bytes()
	case jsonl.TypeCompaction:
		first := n
		for _, k := range n.kids {
			first = k
			break
		}
		b := env(jsonl.NewObject(len(n.summary)+160).String("type", n.typ)).
			String("summary", n.summary).String("firstKeptEntryId", first.id).Number("tokensBefore", n.tokens)
		if n.details != nil {
			b.Raw("details", n.details)
		}
		return b.Bytes()
	case jsonl.TypeModelChange:
		return env(jsonl.NewObject(160).String("type", n.typ)).String("provider", n.provider).String("modelId", n.modelID).Bytes()
	case jsonl.TypeThinkingLevelChange:
		return env(jsonl.NewObject(128).String("type", n.typ)).String("thinkingLevel", n.level).Bytes()
	case jsonl.TypeSessionInfo:
		return env(jsonl.NewObject(128).String("type", n.typ)).String("name", n.summary).Bytes()
	}
	return env(jsonl.NewObject(96).String("type", n.typ)).Bytes()
}
