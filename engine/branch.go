package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/tree"
)

// Branch moves the leaf to the entry id, so the next append becomes its
// child. Like pi, nothing is written: the move is lost on reload unless
// something is appended. BranchWithSummary moves durably.
func (s *Session) Branch(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if !s.ix.Has(id) {
		return entryNotFound(id)
	}
	s.ix.SetLeaf(id, KindString)
	s.leafMoved = true
	return nil
}

// branchMarkerType is the customType of the entry BranchDurably appends.
const branchMarkerType = "sessctl-branch"

// BranchDurably moves the leaf to the entry id without a summary, and
// keeps the move: Branch only moves the leaf in memory, as pi's branch()
// does, so a custom entry (which the model context and pi's tree view
// leave out) is appended at id and becomes the leaf on every reload. Its
// customType is "sessctl-branch" and its data names the leaf it moved
// from ({"from": ID}, null when there was none). It returns the new
// entry's id.
func (s *Session) BranchDurably(id string) (string, error) {
	from, ok := s.LeafID()
	data := jsonl.NewObject(64)
	if ok {
		data.String("from", from)
	} else {
		data.Null("from")
	}
	if err := s.Branch(id); err != nil {
		return "", err
	}
	return s.AppendCustomEntry(branchMarkerType, json.RawMessage(data.Bytes()))
}

// ResetLeaf sets the leaf to null: the next append starts a new root.
func (s *Session) ResetLeaf() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ix.SetLeaf("", KindNull)
	s.leafMoved = true
}

// BranchSummary is a branch_summary entry to append (pi's
// branchWithSummary arguments). A compaction.BranchResult (from
// compaction.SummarizeBranch, FinishBranch or Session.SummarizeBranch)
// fits into it: BranchSummary{FromID: id, Summary: res.Summary, Details:
// res.Details}.
type BranchSummary struct {
	// FromID is the entry the leaf moves to; the entry hangs from it and
	// its fromId names it. "" moves the leaf to null instead (pi's
	// branchWithSummary(null, ...)): the entry is a new root and its
	// fromId is "root".
	FromID  string
	Summary string
	// Details is any value: a compaction.FileLists for pi's {readFiles,
	// modifiedFiles}, JSON text (json.RawMessage or []byte), or a value
	// encoding/json encodes. nil leaves the member out.
	Details any
	// FromHook, when not nil, is written as fromHook: pi's agent writes
	// false for its own summaries, true for an extension's. nil leaves it
	// out, as pi's branchWithSummary without the argument does.
	FromHook *bool
	// Usage is what the summary request spent (pi-ai's usage object);
	// nil leaves the member out.
	Usage any
}

// BranchWithSummary moves the leaf to b.FromID (or to null) and appends a
// branch_summary entry there (pi's branchWithSummary). The summary entry
// becomes the leaf, so the move survives a reload, unlike Branch's. The
// entry b.FromID must exist.
func (s *Session) BranchWithSummary(b BranchSummary) (string, error) {
	d, err := marshalOpt(b.Details)
	if err != nil {
		return "", fmt.Errorf("branch with summary: %w", err)
	}
	u, err := marshalOpt(b.Usage)
	if err != nil {
		return "", fmt.Errorf("branch with summary: %w", err)
	}
	root := b.FromID == ""
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(func() (*pending, error) {
		if !root && !s.ix.Has(b.FromID) {
			return nil, entryNotFound(b.FromID)
		}
		// The entry hangs from FromID; the leaf stays where it is until
		// the entry is written and becomes the leaf. Its fromId is the
		// leaf it leaves, the end of the abandoned branch ("root" for
		// none), as pi 1.x writes it (0.73.1 wrote FromID).
		oldLeaf, oldKind := s.ix.Leaf()
		from := []byte(`"root"`)
		switch oldKind {
		case KindString:
			from = jsonl.AppendString(nil, oldLeaf)
		case jsonl.KindNull, jsonl.KindAbsent:
		default:
			from = []byte(jsonl.KeyString(oldLeaf))
		}
		if !root {
			s.ix.SetLeaf(b.FromID, KindString)
		} else {
			s.ix.SetLeaf("", KindNull)
		}
		p := s.envelope(jsonl.TypeBranchSummary)
		s.ix.SetLeaf(oldLeaf, oldKind)
		p.b.Raw("fromId", from).String("summary", b.Summary)
		if d != nil {
			p.b.Raw("details", d)
		}
		if u != nil {
			p.b.Raw("usage", u)
		}
		if b.FromHook != nil {
			p.b.Bool("fromHook", *b.FromHook)
		}
		return p, nil
	})
}

// NewSessionOptions configure NewSession.
type NewSessionOptions struct {
	// ID is the new session id; "" draws one. It must be usable as part of
	// a file name (no separators, no NUL): pi does not check; sessctl does.
	ID string
	// ParentSession is stored in the header when not nil.
	ParentSession *string
}

// NewSession replaces the session with a new, empty one in the same
// directory (pi's newSession) and returns its file path ("" in memory).
// The old file and its lock are released; the new file appears at the
// first user or assistant message.
func (s *Session) NewSession(ctx context.Context, o NewSessionOptions) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return "", err
	}
	id := o.ID
	if id == "" {
		id = s.opts.sessionID()
	}
	if err := s.startNew(ctx, id, o.ParentSession); err != nil {
		return "", err
	}
	return s.file, nil
}

// CreateBranchedSession starts a new session holding the root-to-leafID
// path of this one (label entries dropped, then re-created, with the
// timestamps they were set at, for the labels whose targets are on the
// path), with parentSession naming this session's file (pi's
// createBranchedSession). The session switches to the new one
// and returns its path ("" in memory). The new file is written at once
// when the path holds an assistant message, otherwise at the first one.
// The old file is never modified.
func (s *Session) CreateBranchedSession(ctx context.Context, leafID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return "", err
	}
	plan, err := planBranch(s.ix, leafID, s.file)
	if err != nil {
		return "", err
	}
	var parent *string
	if s.persist {
		p := s.file
		parent = &p
	}
	id := s.opts.sessionID()
	now := s.opts.now()
	header := jsonl.NewHeaderLine(id, now, s.cwd, parent)
	if s.persist {
		if err := layout.CheckName(id); err != nil {
			return "", fmt.Errorf("create branched session: %w", err)
		}
	}
	// Build the new state first; switch files only when it is complete.
	ix := tree.Build(nil)
	for i, e := range plan.kept {
		if parent, ok := plan.reparent[i]; ok {
			re, err := withParent(e, parent)
			if err != nil {
				return "", fmt.Errorf("create branched session: %w", err)
			}
			e = re
		}
		ix.Add(e)
	}
	for _, l := range plan.labels {
		leaf, kind := ix.Leaf()
		line := l.line(entryID(s.candidate(), newUUID, ix.Has), leaf, kind)
		e, err := jsonl.ParseEntry(line)
		if err != nil {
			return "", err
		}
		ix.Add(&e)
	}
	hasConversation := false
	for _, e := range ix.Entries() {
		if isConversation(e) {
			hasConversation = true
			break
		}
	}
	newFile := ""
	if s.persist {
		newFile = filepath.Join(s.dir, layout.SessionFileName(now, id))
		if err := s.switchFile(ctx, newFile); err != nil {
			return "", err
		}
	}
	h, _ := jsonl.ParseEntry(header)
	s.header = h
	s.ix = ix
	s.onDisk = false
	s.unwritten = 0
	s.hasConversation = hasConversation
	if s.persist && hasConversation {
		if err := s.createFile(nil); err != nil {
			return "", err
		}
	}
	return newFile, nil
}

// branchPlan is what a session holding one path of another is made of
// (pi's createBranchedSession): the path's entries but its labels, some
// of them linked to a new parent, then label entries re-created for the
// labels whose targets are on the path.
type branchPlan struct {
	kept []*Entry
	// reparent holds, for the kept entries (by index) that followed a
	// dropped label, the parentId (JSON) they get: pi keeps the parentId
	// of an entry that follows a label, which then names an entry the new
	// file does not have, so that the branch breaks there and the context
	// loses everything above it; such an entry is linked to the nearest
	// kept ancestor instead.
	reparent map[int][]byte
	labels   []pathLabel
}

// pathLabel is a label whose target is on the path, with the timestamp of
// the label entry that set it (nil when it had none).
type pathLabel struct {
	tree.LabelPair
	ts []byte
}

// planBranch plans the session holding the root-to-leafID path of ix, the
// index of the session file file. The kept entries are ix's own (without
// their bytes when ix is a View's): the plan needs only their envelopes.
func planBranch(ix *tree.Index, leafID, file string) (*branchPlan, error) {
	path := ix.Branch(leafID)
	if len(path) == 0 {
		return nil, entryNotFound(leafID)
	}
	if at, loop := ix.Loop(leafID); loop {
		// The copied path would keep the loop, and pi could not load the
		// new file.
		return nil, &LoopError{Path: file, Entry: leafID, At: tree.Key(at), Line: at.Line}
	}
	plan := &branchPlan{reparent: map[int][]byte{}}
	onPath := make(map[string]bool, len(path))
	dropped := make(map[string]bool)
	for _, e := range path {
		if e.Type == jsonl.TypeLabel {
			dropped[tree.Key(e)] = true
			continue
		}
		if p, ok := tree.ParentKey(e); ok && dropped[p] {
			parent := []byte("null")
			if n := len(plan.kept); n > 0 {
				parent, _ = plan.kept[n-1].IDJSON()
			}
			plan.reparent[len(plan.kept)] = parent
		}
		plan.kept = append(plan.kept, e)
		onPath[tree.Key(e)] = true
	}
	for _, l := range ix.Labels() {
		if onPath[l.Target] {
			ts, _ := ix.LabelTimestamp(l.Target)
			plan.labels = append(plan.labels, pathLabel{l, ts})
		}
	}
	return plan, nil
}

// line returns the label entry that re-creates l with id lid, its parent
// the leaf (id, kind) of the session so far.
func (l pathLabel) line(lid, leaf string, kind jsonl.Kind) []byte {
	b := jsonl.NewObject(160).String("type", jsonl.TypeLabel).String("id", lid)
	if raw, ok := keyJSON(leaf); ok && kind == KindString {
		b.Raw("parentId", raw)
	} else if kind == KindString {
		b.String("parentId", leaf)
	} else {
		b.Null("parentId")
	}
	// The label keeps the time it was set (pi 0.73.1; 0.58.3 wrote the
	// time of the copy), and has none when its entry had none.
	if l.ts != nil {
		b.Raw("timestamp", l.ts)
	}
	if raw, ok := keyJSON(l.Target); ok {
		b.Raw("targetId", raw)
	} else {
		b.String("targetId", l.Target)
	}
	return b.String("label", l.Label).Bytes()
}

// withParent returns a copy of e whose parentId member holds parent (JSON
// text), every other byte of the line unchanged.
func withParent(e *Entry, parent []byte) (*Entry, error) {
	var spans [][2]int
	err := jsonl.Members(e.Raw, func(m *jsonl.Member) bool {
		if m.KeyIs("parentId") {
			spans = append(spans, [2]int{m.ValStart, m.ValStart + len(m.Value)})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	raw := slices.Clone(e.Raw)
	for i := len(spans) - 1; i >= 0; i-- {
		raw = slices.Concat(raw[:spans[i][0]], parent, raw[spans[i][1]:])
	}
	ne, err := jsonl.ParseEntry(raw)
	if err != nil {
		return nil, err
	}
	ne.Line, ne.Offset = e.Line, e.Offset
	return &ne, nil
}

// ChildOptions configure NewChild.
type ChildOptions struct {
	// ID is the child's session id; "" draws one.
	ID string
	// Cwd is the child's working directory; "" is the parent's.
	Cwd string
	// Dir is the child's session directory; "" is the parent's.
	Dir string
}

// NewChild starts a new session whose header names this session's file as
// its parentSession, as a subagent's session: in this session's directory
// (o.Dir otherwise), with this session's store options (clock, ids, sync
// policy, filesystem) and CreateOptions.WriteAtOnce. The child is open
// for writing with its own writer lock; like Create, its file appears at
// its first user or assistant message (or Flush, or with WriteAtOnce its first
// append), and closing it before then leaves nothing behind. This session is not
// changed and may be open read-only. The child of a session in memory is
// in memory too, without a parentSession.
func (s *Session) NewChild(ctx context.Context, o ChildOptions) (*Session, error) {
	s.mu.Lock()
	opts, cwd, dir, file, persist := s.opts, s.cwd, s.dir, s.file, s.persist
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	opts.ReadOnly, opts.noLock, opts.Cwd, opts.create = false, false, "", false
	if o.ID != "" {
		id := o.ID
		opts.NewSessionID = func() string { return id }
	}
	if o.Cwd != "" {
		cwd = o.Cwd
	}
	if !persist {
		return inMemory(cwd, opts), nil
	}
	opts.Dir = dir
	if o.Dir != "" {
		opts.Dir = o.Dir
	}
	opts.ParentSession = file
	s2, err := create(ctx, cwd, opts)
	if err != nil {
		return nil, fmt.Errorf("new child session of %s: %w", file, err)
	}
	return s2, nil
}

// SummarizeBranch summarises the part of the tree that moving the leaf
// from the current leaf to target abandons, as pi's tree navigation does
// (a budget for a 16384-token reserve), with sum and extra instructions.
// ok is false when there is nothing to summarise (no leaf, or nothing
// abandoned); the result is then empty.
func (s *Session) SummarizeBranch(ctx context.Context, target string, sum compaction.Summarizer, instructions string) (res compaction.BranchResult, ok bool, err error) {
	var col compaction.BranchCollection
	if oldLeaf, ok := s.LeafID(); ok {
		s.Index(func(ix *tree.Index) { col = compaction.CollectEntriesForBranchSummary(ix, oldLeaf, target) })
	}
	if len(col.Entries) == 0 {
		return compaction.BranchResult{}, false, nil
	}
	prep := compaction.PrepareBranchEntries(col.Entries, compaction.BranchBudget(0, 16384))
	res, err = compaction.SummarizeBranch(ctx, &prep, sum, instructions, false)
	return res, err == nil, err
}
