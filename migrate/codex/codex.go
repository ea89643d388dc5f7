package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Codex importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "codex".
func (Source) Name() string { return "codex" }

// Title returns "Codex".
func (Source) Title() string { return "Codex" }

// Locations returns CODEX_HOME when set, else ~/.codex.
func (Source) Locations(l migrate.Locator) []string {
	if d := l.Env("CODEX_HOME"); d != "" {
		return []string{d}
	}
	return []string{filepath.Join(l.Home, ".codex")}
}

// Detect reports whether path is a rollout file (plain or compressed) or
// a directory holding rollouts (the Codex home, its sessions directory,
// or below).
func (Source) Detect(path string) bool {
	files, err := rollouts(nil, path, true)
	return err == nil && len(files) > 0
}

// Open lists the rollouts under path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	files, err := rollouts(opts.FS, path, false)
	if err != nil {
		return nil, err
	}
	s := &store{files: files, opts: opts, byID: map[string]*rollout{}, byPlain: map[string]*rollout{}}
	for _, f := range files {
		s.byPlain[f.plain] = f
		if _, dup := s.byID[f.id]; !dup {
			s.byID[f.id] = f
		}
	}
	return s, nil
}

// zstSuffix ends the name of a rollout Codex compressed (since Codex
// 0.137): the plain name plus ".zst".
const zstSuffix = ".zst"

// rollout is one session's rollout file: the plain .jsonl or its
// compressed .jsonl.zst twin, whichever is read.
type rollout struct {
	path  string // the file read
	plain string // its plain name: path without ".zst"
	id    string // the session id its name ends with
	// other is the twin that is not read, when both exist.
	other string
}

// isRolloutName reports whether name is a rollout's: "rollout-" and
// ".jsonl" or ".jsonl.zst"; Codex's temporary files (*.tmp) are not.
func isRolloutName(name string) bool {
	return strings.HasPrefix(name, "rollout-") &&
		(strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl"+zstSuffix))
}

// rollouts returns the rollout files at or under path, oldest first (their
// names start with the time), so parents come before their subagents and
// forks. Where a rollout and its compressed twin both exist (Codex
// compressing or decompressing it), one is taken: the plain file, unless
// the compressed one was modified later.
func rollouts(fsys vfs.FS, path string, first bool) ([]*rollout, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !strings.HasSuffix(abs, ".jsonl") && !strings.HasSuffix(abs, ".jsonl"+zstSuffix) {
			return nil, fmt.Errorf("%s is not a Codex rollout", abs)
		}
		return []*rollout{newRollout(abs)}, nil
	}
	roots := []string{abs}
	if s := filepath.Join(abs, "sessions"); srcfs.IsDir(fsys, s) {
		roots = []string{s}
		if a := filepath.Join(abs, "archived_sessions"); srcfs.IsDir(fsys, a) {
			roots = append(roots, a)
		}
	}
	var found []string
	for _, root := range roots {
		f, err := srcfs.Find(fsys, root, 0, first, func(d fs.DirEntry) bool { return isRolloutName(d.Name()) })
		if err != nil {
			return nil, err
		}
		if found = append(found, f...); first && len(found) > 0 {
			return []*rollout{newRollout(found[0])}, nil
		}
	}
	byPlain := map[string]*rollout{}
	var files []*rollout
	for _, p := range found {
		r := newRollout(p)
		twin := byPlain[r.plain]
		if twin == nil {
			byPlain[r.plain] = r
			files = append(files, r)
			continue
		}
		if newer(fsys, r, twin) {
			twin.other, twin.path = twin.path, r.path
		} else {
			twin.other = r.path
		}
	}
	sort.Slice(files, func(i, j int) bool {
		bi, bj := filepath.Base(files[i].plain), filepath.Base(files[j].plain)
		if bi != bj {
			return bi < bj
		}
		return files[i].plain < files[j].plain
	})
	return files, nil
}

func newRollout(path string) *rollout {
	plain := strings.TrimSuffix(path, zstSuffix)
	return &rollout{path: path, plain: plain, id: fileID(plain)}
}

// newer reports whether a is to be read rather than its twin b: the plain
// file is, unless the compressed one was modified strictly later. Codex
// itself prefers the plain file; the two hold the same lines while it
// compresses or decompresses, and a plain file appended to after a
// failed removal of the compressed one is newer anyway.
func newer(fsys vfs.FS, a, b *rollout) bool {
	za, zb := strings.HasSuffix(a.path, zstSuffix), strings.HasSuffix(b.path, zstSuffix)
	ma, mb := mtime(fsys, a.path), mtime(fsys, b.path)
	switch {
	case za == zb:
		return false
	case za:
		return ma.After(mb)
	}
	return !mb.After(ma)
}

func mtime(fsys vfs.FS, p string) time.Time {
	st, err := srcfs.Stat(fsys, p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

type store struct {
	files   []*rollout
	byID    map[string]*rollout // by session id (from the file name)
	byPlain map[string]*rollout // by plain name, the refs' Key
	opts    migrate.ImportOptions
}

func (s *store) Close() error { return nil }

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// fileID returns the session id in a rollout's (plain) name.
func fileID(path string) string {
	base := strings.TrimSuffix(filepath.Base(strings.TrimSuffix(path, zstSuffix)), ".jsonl")
	if m := uuidRe.FindString(base); m != "" {
		return strings.ToLower(m)
	}
	return base
}

func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, f := range s.files {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			if !yield(migrate.Ref{ID: f.id, Path: f.path, Key: f.plain}, nil) {
				return
			}
		}
	}
}

// openRollout opens a rollout for reading its lines: a compressed one
// through a zstd decoder (Codex writes one frame; several, as the zstd
// tool may write, are read one after another). progress counts the bytes
// of the file itself.
func openRollout(fsys vfs.FS, path string, progress func(path string, done, total int64)) (io.ReadCloser, error) {
	f, err := srcfs.OpenTracked(fsys, path, progress)
	if err != nil || !strings.HasSuffix(path, zstSuffix) {
		return f, err
	}
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &zstReader{dec: dec, f: f}, nil
}

type zstReader struct {
	dec *zstd.Decoder
	f   io.Closer
}

func (z *zstReader) Read(p []byte) (int, error) {
	n, err := z.dec.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zstd: %w", err)
	}
	return n, err
}

func (z *zstReader) Close() error {
	z.dec.Close()
	return z.f.Close()
}

// line is one rollout line, in either form.
type line struct {
	Timestamp  json.RawMessage `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType string          `json:"record_type"`
	ID         *string         `json:"id"`
}

// item is a response item (and, loosely, other payloads).
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Encrypted string          `json:"encrypted_content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	ID        json.RawMessage `json:"id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Status    string          `json:"status"`
	Message   json.RawMessage `json:"message"`
	Info      *struct {
		Last *struct {
			Input     float64 `json:"input_tokens"`
			Cached    float64 `json:"cached_input_tokens"`
			Output    float64 `json:"output_tokens"`
			Total     float64 `json:"total_tokens"`
			Reasoning float64 `json:"reasoning_output_tokens"`
		} `json:"last_token_usage"`
	} `json:"info"`

	// session_meta and turn_context
	ForkedFromID   string          `json:"forked_from_id"`
	ParentThreadID string          `json:"parent_thread_id"`
	HistoryMode    string          `json:"history_mode"`
	HistoryBase    json.RawMessage `json:"history_base"`
	Cwd            string          `json:"cwd"`
	CLIVersion     string          `json:"cli_version"`
	ModelProvider  string          `json:"model_provider"`
	Model          string          `json:"model"`
	Effort         string          `json:"effort"`
	Timestamp      json.RawMessage `json:"timestamp"`
	Source         json.RawMessage `json:"source"`
}

type part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// entry is one decoded rollout line.
type entry struct {
	n    int // 1-based line
	t    time.Time
	hasT bool
	kind string // envelope type, or "item" for a bare response item
	it   item
	raw  []byte
}

// eachEntry reads and decodes the lines of a rollout one at a time,
// calling fn with each entry in turn until it returns false; nothing of
// the rollout is held but the line being read. A line that is not JSON
// (or not UTF-8) is damage; an error reading the file (a compressed one
// that is cut short or corrupt) is damage at the line being read, and the
// lines before it are kept. lines, when not 0, stops after that line
// (what an earlier read of a rollout still being written saw), and skip
// names lines not to yield. last is the last line read.
func (s *store) eachEntry(ctx context.Context, r *rollout, progress func(string, int64, int64), lines int, skip map[int]bool, fn func(e *entry) bool) (damage []*migrate.Damage, last int, err error) {
	fh, err := openRollout(s.opts.FS, r.path, progress)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	entries := 0
	stopped := false
	err = migrate.EachLine(fh, s.opts.MaxLine, func(n int, b []byte, err error) bool {
		if ctx.Err() != nil || lines > 0 && n > lines {
			return false
		}
		last = n
		if skip[n] {
			return true
		}
		var l line
		if err == nil {
			err = migrate.DecodeLine(b, &l)
		}
		if err != nil {
			damage = append(damage, &migrate.Damage{Path: r.path, Line: n, Err: err})
			return true
		}
		e := entry{n: n}
		e.t, e.hasT = migrate.ParseTime(l.Timestamp)
		switch {
		case l.Payload != nil && l.Type != "":
			e.kind, e.raw = l.Type, l.Payload
		case l.RecordType != "":
			return true
		case l.Type == "" && l.ID != nil && entries == 0:
			e.kind, e.raw = "legacy_meta", b
		case l.Type != "":
			e.kind, e.raw, e.hasT = "response_item", b, false
		default:
			return true
		}
		if err := json.Unmarshal(e.raw, &e.it); err != nil {
			damage = append(damage, &migrate.Damage{Path: r.path, Line: n, Err: err})
			return true
		}
		entries++
		if !fn(&e) {
			stopped = true
			return false
		}
		return true
	})
	if ctx.Err() != nil {
		return nil, last, ctx.Err()
	}
	if err != nil && !stopped && (lines == 0 || last < lines) {
		if entries == 0 && len(damage) == 0 {
			return nil, last, &migrate.Damage{Path: r.path, Err: err}
		}
		damage = append(damage, &migrate.Damage{Path: r.path, Line: last + 1, Err: fmt.Errorf("the rest of the file is unreadable: %w", err)})
	}
	return damage, last, nil
}

// entries returns the entries of a rollout as an iterator, for reading
// two rollouts side by side.
func (s *store) entries(ctx context.Context, r *rollout) iter.Seq[*entry] {
	return func(yield func(*entry) bool) {
		_, _, _ = s.eachEntry(ctx, r, nil, 0, nil, yield)
	}
}

// knownHistoryModes are the session_meta history_mode values this
// importer reads: legacy rollouts copy a fork's history into the child,
// paginated ones name it (history_base).
var knownHistoryModes = map[string]bool{"": true, "legacy": true, "paginated": true}

// Convert reads the rollout twice, each read holding one line at a time:
// the first (readFacts) finds the session's facts, which name it and its
// entries, the second (convertEntries) converts. The second stops where
// the first did (Codex may be appending) and skips the lines it found
// damaged.
func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	r := s.byPlain[ref.Key]
	if r == nil {
		r = newRollout(ref.Key)
	}
	facts, err := s.readFacts(ctx, r)
	if err != nil {
		return nil, err
	}
	m, sourceID, provider, fork, lines, damage := facts.meta, facts.sourceID, facts.provider, facts.fork, facts.lines, facts.damage
	conv := &migrate.Conversion{Damage: damage}
	damaged := make(map[int]bool, len(damage))
	for _, d := range damage {
		damaged[d.Line] = true
	}
	if m.Start.IsZero() {
		if st, err := srcfs.Stat(s.opts.FS, r.path); err == nil {
			m.Start = st.ModTime().UTC()
		}
	}
	if m.Cwd == "" {
		m.Cwd = s.opts.Cwd
	}
	if provider == "" {
		provider = "openai"
	}
	if r.other != "" {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: r.other,
			Reason: "another copy of the session " + filepath.Base(r.path) + ", which was read instead"})
	}

	c := &converter{b: migrate.NewBuilder("codex", sourceID), provider: provider, tools: map[string]string{}, clock: m.Start}
	c.b.SetTempDir(s.opts.TempDir)
	var replayed [2]int // the lines of a fork's replay of its parent, left out
	if fork.parent != "" {
		replayed = s.forkPrefix(ctx, c, fork, sourceID, r, lines, damaged)
	}
	before := c.b.Len()
	if err := s.convertEntries(ctx, c, r, lines, damaged, replayed, facts.haveUser, facts.haveAsst); err != nil {
		return nil, err
	}
	c.closeRun()
	c.finishLast()
	switch {
	case c.b.Len() == 0:
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Path, Reason: migrate.SkipEmpty})
		return conv, nil
	case c.b.Len() == before && c.dropped > 0:
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Path,
			Reason: "a fork with nothing of its own after the history of " + fork.parent})
		return conv, nil
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

// rolloutFacts are what the first read of a rollout finds: the session's
// facts, whether it has user and assistant messages, the fork it names,
// the damaged lines and where the read stopped.
type rolloutFacts struct {
	meta               migrate.Meta
	sourceID           string
	provider           string
	haveUser, haveAsst bool
	fork               forkInfo
	damage             []*migrate.Damage
	lines              int
}

// readFacts is the first read of rollout r. Session facts first: they
// name the session. The first session_meta is the rollout's own; later
// ones are copies (a fork's replay of its parent) or repeats.
func (s *store) readFacts(ctx context.Context, r *rollout) (*rolloutFacts, error) {
	// Provenance names the plain rollout even when the compressed one is
	// read, so that Codex compressing a session does not change its
	// import.
	m := migrate.Meta{SourcePath: r.plain}
	if r.path != r.plain {
		m.ReadFrom = r.path
	}
	sourceID := r.id
	provider := ""
	haveUser, haveAsst := false, false
	metaSeen := false
	var fork forkInfo
	var refuse error
	i := -1
	damage, lines, err := s.eachEntry(ctx, r, s.opts.Progress, 0, nil, func(e *entry) bool {
		i++
		switch e.kind {
		case "session_meta", "legacy_meta":
			id := jsonString(e.it.ID)
			if metaSeen && id != sourceID {
				// A copy of another session's meta (a fork's replay).
				break
			}
			first := !metaSeen
			metaSeen = true
			if id != "" {
				sourceID = id
			}
			if first && !knownHistoryModes[e.it.HistoryMode] {
				refuse = &migrate.Damage{Path: r.path, Line: e.n, Err: fmt.Errorf("history_mode %q is not one this importer reads (legacy, paginated)", e.it.HistoryMode)}
				return false
			}
			if t, ok := migrate.ParseTime(e.it.Timestamp); ok {
				m.Start = t
			} else if e.hasT {
				m.Start = e.t
			}
			if e.it.Cwd != "" && m.Cwd == "" {
				m.Cwd, m.CwdKnown = e.it.Cwd, true
			}
			if e.it.CLIVersion != "" {
				m.SourceVersion = e.it.CLIVersion
			}
			if e.it.ModelProvider != "" {
				provider = e.it.ModelProvider
			}
			if p := findString(e.it.Source, "parent_thread_id"); p != "" {
				m.ParentSourceID = p
			} else if e.it.ParentThreadID != "" {
				m.ParentSourceID = e.it.ParentThreadID
			}
			if first && e.it.ForkedFromID != "" {
				fork = forkInfo{parent: e.it.ForkedFromID, meta: i, base: jsonl.KindOf(bytes.TrimSpace(e.it.HistoryBase)) == jsonl.KindObject}
				m.ParentSourceID = e.it.ForkedFromID
			}
		case "turn_context":
			if e.it.Cwd != "" && m.Cwd == "" {
				m.Cwd, m.CwdKnown = e.it.Cwd, true
			}
		case "response_item":
			if e.it.Type == "message" {
				switch e.it.Role {
				case "user":
					if c := envCwd(e.it.Content); c != "" && m.Cwd == "" {
						m.Cwd, m.CwdKnown = c, true
					}
					haveUser = true
				case "assistant":
					haveAsst = true
				}
			}
		}
		if m.Start.IsZero() && e.hasT {
			m.Start = e.t
		}
		return true
	})
	switch {
	case err != nil:
		return nil, err
	case refuse != nil:
		return nil, refuse
	}
	return &rolloutFacts{meta: m, sourceID: sourceID, provider: provider, haveUser: haveUser, haveAsst: haveAsst,
		fork: fork, damage: damage, lines: lines}, nil
}

// convertEntries is the second read of rollout r: it converts its first
// lines lines into c, leaving out the damaged ones and the lines of a
// fork's replay of its parent (replayed).
func (s *store) convertEntries(ctx context.Context, c *converter, r *rollout, lines int, damaged map[int]bool, replayed [2]int, haveUser, haveAsst bool) error {
	_, _, err := s.eachEntry(ctx, r, nil, lines, damaged, func(e *entry) bool {
		if e.n >= replayed[0] && e.n <= replayed[1] {
			return true
		}
		if e.hasT {
			c.clock = e.t
		}
		c.line = e.n
		it := &e.it
		switch e.kind {
		case "turn_context":
			c.turnContext(it)
		case "response_item":
			c.responseItem(it, e.raw)
		case "event_msg":
			c.event(it, haveUser, haveAsst)
		case "compacted":
			c.closeRun()
			c.tip = c.b.Compaction(c.key(), c.tip, c.clock, jsonString(it.Message), c.lastTotal, nil)
		}
		return true
	})
	return err
}

// forkInfo is what a rollout's own session_meta says of the session it
// was forked from.
type forkInfo struct {
	parent string // forked_from_id
	meta   int    // the index of the child's session_meta in the entries
	base   bool   // history_base: the child copies nothing of the parent
}

// ForkType is the customType of the entry a Codex fork starts with (the
// root of its tree): data {"forkedFromId", "parentHistory", "replayedLines"?,
// "firstLine"?, "lastLine"?}. parentHistory says where the parent's
// history is:
//
//   - "parent": in the parent's import, which parentSession names; the
//     child's lines firstLine to lastLine replayed it (legacy rollouts
//     copy the parent's items into the child) and were not imported;
//   - "referenced": a paginated rollout names it (history_base) and
//     copies none of it;
//   - "imported": the parent's rollout is not in the store read, so the
//     lines replaying it are imported as the start of this session (they
//     are the only copy);
//   - "none": the child holds no replay of it.
const ForkType = "codex-fork"

// forkPrefix finds the lines of a forked rollout that are not its own:
// for a legacy rollout that replays its parent (its second entry is the
// parent's session_meta), the lines that match the parent's rollout, read
// from the same store, item by item, are left out (the parent's import
// has them). It reads the two rollouts side by side, one entry of each at
// a time, and returns the first and last line of the replay (0, 0 when
// nothing is left out). It adds the ForkType entry, and the model and
// thinking level the replay ended on, as the child's first entries.
// lines and damaged are the first read's (see eachEntry).
func (s *store) forkPrefix(ctx context.Context, c *converter, f forkInfo, childID string, r *rollout, lines int, damaged map[int]bool) (replayed [2]int) {
	note := jsonl.NewObject(128).String("forkedFromId", f.parent)
	child, stopChild := iter.Pull(func(yield func(*entry) bool) {
		_, _, _ = s.eachEntry(ctx, r, nil, lines, damaged, yield)
	})
	defer stopChild()
	var ce *entry
	ok := true
	for k := 0; k <= f.meta+1 && ok; k++ {
		ce, ok = child()
	}
	replay := ok && isMeta(*ce) && jsonString(ce.it.ID) == f.parent
	switch {
	case f.base:
		note.String("parentHistory", "referenced")
	case !replay:
		note.String("parentHistory", "none")
	default:
		var parent func() (*entry, bool)
		var pe *entry
		pok := false
		if pr := s.byID[f.parent]; pr != nil {
			var stopParent func()
			parent, stopParent = iter.Pull(s.entries(ctx, pr))
			defer stopParent()
			pe, pok = parent()
		}
		if !pok {
			note.String("parentHistory", "imported")
			break
		}
		n := 0
		for ok && pok {
			if isMeta(*ce) && jsonString(ce.it.ID) == childID {
				break
			}
			if sameItem(ce, pe) {
				if n == 0 {
					replayed[0] = ce.n
				}
				replayed[1] = ce.n
				n++
				if ce.kind == "turn_context" {
					if ce.it.Model != "" {
						c.model = ce.it.Model
					}
					if ce.it.Effort != "" {
						c.effort = ce.it.Effort
					}
				}
				if ce.kind == "event_msg" && ce.it.Info != nil && ce.it.Info.Last != nil {
					c.lastTotal = ce.it.Info.Last.Total
				}
				ce, ok = child()
				pe, pok = parent()
				continue
			}
			if skippable(pe) {
				pe, pok = parent()
				continue
			}
			break
		}
		c.dropped = n
		note.String("parentHistory", "parent").Number("replayedLines", float64(n))
		if n > 0 {
			note.Number("firstLine", float64(replayed[0])).Number("lastLine", float64(replayed[1]))
		}
	}
	t := c.clock
	c.tip = c.b.Custom("fork", nil, t, ForkType, note.Bytes())
	if c.model != "" {
		c.tip = c.b.ModelChange("fork/model", c.tip, t, c.provider, c.model)
	}
	if c.effort != "" {
		c.tip = c.b.ThinkingLevel("fork/effort", c.tip, t, c.effort)
	}
	return replayed
}

func isMeta(e entry) bool { return e.kind == "session_meta" }

// sameItem reports whether a line of a fork is the copy of a line of its
// parent: the same type and payload, the line's time aside (the copy is
// stamped when the fork was made), and payload members that are null or
// (on response items) an id left out, since a copy may gain an id under
// the child's or "content": null.
func sameItem(child, parent *entry) bool {
	if child.kind != parent.kind {
		return false
	}
	if child.kind == "session_meta" {
		return jsonString(child.it.ID) == jsonString(parent.it.ID)
	}
	a, b := normItem(child), normItem(parent)
	return a != nil && b != nil && reflect.DeepEqual(a, b)
}

func normItem(e *entry) map[string]any {
	var v map[string]any
	if json.Unmarshal(e.raw, &v) != nil {
		return nil
	}
	for k, x := range v {
		if x == nil || k == "id" && e.kind == "response_item" {
			delete(v, k)
		}
	}
	return v
}

// skippable reports whether a parent's line may be missing from the
// replay in its fork: events and items that the writing Codex no longer
// keeps (ghost snapshots are dropped when a rollout is loaded; which
// events are kept changed between versions).
func skippable(e *entry) bool {
	switch e.kind {
	case "session_meta", "turn_context", "compacted":
		return false
	case "response_item":
		return e.it.Type == "ghost_snapshot"
	}
	return true
}

// converter turns the items of one rollout into a linear chain.
type converter struct {
	b         *migrate.Builder
	tip       *migrate.Node
	run       *asst       // the open assistant run
	last      *asst       // the latest assistant message, still open to its usage and stop reason
	pending   [][2]string // synthesized results: call id, text
	provider  string
	model     string
	effort    string
	tools     map[string]string
	clock     time.Time
	line      int
	lastTotal float64
	dropped   int // lines of a fork's replay of its parent left out
}

type asst struct {
	node     *migrate.Node
	a        migrate.Assistant
	usageSet bool
}

func (c *converter) key() string { return "L" + strconv.Itoa(c.line) }

func (c *converter) turnContext(it *item) {
	if it.Model != "" && it.Model != c.model {
		c.closeRun()
		c.model = it.Model
		c.tip = c.b.ModelChange(c.key(), c.tip, c.clock, c.provider, c.model)
	}
	if it.Effort != "" && it.Effort != c.effort {
		c.closeRun()
		c.effort = it.Effort
		c.tip = c.b.ThinkingLevel(c.key(), c.tip, c.clock, c.effort)
	}
}

// open returns the open assistant run, starting one when needed.
func (c *converter) open() *asst {
	if c.run == nil {
		a := &asst{a: migrate.Assistant{API: "openai-responses", Provider: c.provider, Model: c.model, Timestamp: migrate.Millis(c.clock)}}
		a.node = c.b.Message(c.key(), c.tip, c.clock, nil)
		c.tip = a.node
		c.finishLast()
		c.run, c.last = a, a
	}
	return c.run
}

// finishLast gives the latest assistant message its final form: nothing
// changes it once another one starts.
func (c *converter) finishLast() {
	if c.last != nil {
		c.last.node.SetMessage(c.last.a.JSON())
	}
}

// closeRun ends the open assistant run, answering its web searches.
func (c *converter) closeRun() {
	if c.run == nil {
		return
	}
	for _, p := range c.pending {
		msg := migrate.ToolResultMessage(p[0], "web_search", migrate.TextContent(p[1]), nil, false, migrate.Millis(c.clock))
		c.tip = c.b.Message(c.key(), c.tip, c.clock, msg)
	}
	c.pending = nil
	c.run = nil
}

// contextualPrefixes start the user messages Codex writes itself.
var contextualPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# agents.md instructions", "<turn_aborted>",
	"<user_shell_command>", "<skill>", "<skills_instructions>", "<subagent_notification>",
	"<permissions instructions>", "<collaboration_mode>", "<model_switch>", "<personality_spec>",
	"<hook_prompt",
}

func contextual(parts []part) bool {
	for _, p := range parts {
		t := strings.ToLower(strings.TrimSpace(p.Text))
		for _, pre := range contextualPrefixes {
			if strings.HasPrefix(t, pre) {
				return true
			}
		}
	}
	return false
}

var cwdRe = regexp.MustCompile(`<cwd>([^<]*)</cwd>`)

// envCwd returns the cwd of an <environment_context> message.
func envCwd(content json.RawMessage) string {
	var parts []part
	_ = json.Unmarshal(content, &parts)
	for _, p := range parts {
		if strings.HasPrefix(strings.TrimSpace(p.Text), "<environment_context>") {
			if m := cwdRe.FindStringSubmatch(p.Text); m != nil {
				return strings.TrimSpace(m[1])
			}
		}
	}
	return ""
}

func (c *converter) user(parts []part) {
	var blocks [][]byte
	for _, p := range parts {
		switch p.Type {
		case "input_text", "text":
			blocks = append(blocks, migrate.TextBlock(p.Text))
		case "input_image":
			if data, mime, ok := dataURL(p.ImageURL); ok {
				blocks = append(blocks, migrate.ImageBlock(data, mime))
			}
		}
	}
	if len(blocks) == 0 {
		return
	}
	c.closeRun()
	c.tip = c.b.Message(c.key(), c.tip, c.clock, migrate.UserMessage(migrate.Array(blocks), migrate.Millis(c.clock)))
}

// dataURL splits a base64 data URL.
func dataURL(u string) (data, mime string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return "", "", false
	}
	return data, strings.TrimSuffix(meta, ";base64"), true
}

func (c *converter) responseItem(it *item, raw []byte) {
	switch it.Type {
	case "message":
		var parts []part
		_ = json.Unmarshal(it.Content, &parts)
		switch it.Role {
		case "user":
			if !contextual(parts) {
				c.user(parts)
			}
		case "assistant":
			a := c.open()
			for _, p := range parts {
				if p.Type == "output_text" || p.Type == "text" {
					a.a.Content = append(a.a.Content, migrate.TextBlock(p.Text))
				}
			}
		}
	case "reasoning":
		a := c.open()
		var texts []string
		var sum []part
		_ = json.Unmarshal(it.Summary, &sum)
		for _, p := range sum {
			texts = append(texts, p.Text)
		}
		if len(texts) == 0 {
			var content []part
			_ = json.Unmarshal(it.Content, &content)
			for _, p := range content {
				texts = append(texts, p.Text)
			}
		}
		sig := ""
		if it.Encrypted != "" {
			if out, err := jsonl.Canonical(nil, raw); err == nil {
				sig = string(out)
			}
		}
		a.a.Content = append(a.a.Content, migrate.ThinkingBlock(strings.Join(texts, "\n\n"), sig, false))
	case "function_call":
		a := c.open()
		c.tools[it.CallID] = it.Name
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(it.CallID, it.Name, migrate.ObjectArgs(it.Arguments)))
	case "custom_tool_call":
		a := c.open()
		c.tools[it.CallID] = it.Name
		args := jsonl.NewObject(len(it.Input)+16).Raw("input", orNull(it.Input)).Bytes()
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(it.CallID, it.Name, args))
	case "local_shell_call":
		a := c.open()
		id := it.CallID
		if id == "" {
			id = jsonString(it.ID)
		}
		c.tools[id] = "local_shell"
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(id, "local_shell", migrate.ObjectArgs(it.Action)))
	case "web_search_call":
		a := c.open()
		id := jsonString(it.ID)
		if id == "" {
			id = "web_search_" + strconv.Itoa(c.line)
		}
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(id, "web_search", migrate.ObjectArgs(it.Action)))
		status := it.Status
		if status == "" {
			status = "completed"
		}
		c.pending = append(c.pending, [2]string{id, "web search " + status + " (Codex keeps no result)"})
	case "function_call_output", "custom_tool_call_output":
		c.closeRun()
		name := c.tools[it.CallID]
		if name == "" {
			name = "unknown"
		}
		content, isErr := output(it.Output)
		c.tip = c.b.Message(c.key(), c.tip, c.clock, migrate.ToolResultMessage(it.CallID, name, content, nil, isErr, migrate.Millis(c.clock)))
	}
}

func orNull(v []byte) []byte {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte("null")
	}
	return v
}

var exitRe = regexp.MustCompile(`(?:Process exited with code|Exit code:) (-?\d+)`)

// output converts a tool output to content blocks and tells whether it
// reports a failure.
func output(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	switch jsonl.KindOf(raw) {
	case jsonl.KindString:
		s, _ := jsonl.String(raw)
		return migrate.TextContent(s), textFailed(s)
	case jsonl.KindArray:
		var parts []part
		_ = json.Unmarshal(raw, &parts)
		var blocks [][]byte
		var texts []string
		for _, p := range parts {
			switch p.Type {
			case "input_text", "output_text", "text":
				blocks = append(blocks, migrate.TextBlock(p.Text))
				texts = append(texts, p.Text)
			case "input_image":
				if data, mime, ok := dataURL(p.ImageURL); ok {
					blocks = append(blocks, migrate.ImageBlock(data, mime))
				}
			}
		}
		return migrate.Array(blocks), textFailed(strings.Join(texts, "\n"))
	case jsonl.KindObject:
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		_ = json.Unmarshal(raw, &o)
		if o.Content != nil {
			content, failed := output(o.Content)
			if o.Success != nil {
				failed = !*o.Success
			}
			return content, failed
		}
		return migrate.TextContent(migrate.JSONText(raw)), false
	}
	return []byte("[]"), false
}

// textFailed reports whether a tool output says the command failed: a
// non-zero exit code in Codex's exec summary or its JSON form.
func textFailed(s string) bool {
	if m := exitRe.FindStringSubmatch(s); m != nil {
		return m[1] != "0"
	}
	var o struct {
		Metadata *struct {
			ExitCode *float64 `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &o) == nil && o.Metadata != nil && o.Metadata.ExitCode != nil {
		return *o.Metadata.ExitCode != 0
	}
	return false
}

func (c *converter) event(it *item, haveUser, haveAsst bool) {
	switch it.Type {
	case "token_count":
		if it.Info == nil || it.Info.Last == nil {
			return
		}
		u := it.Info.Last
		c.lastTotal = u.Total
		if c.last != nil && !c.last.usageSet {
			c.last.usageSet = true
			c.last.a.Usage = message.Usage{Input: migrate.Tokens(u.Input - u.Cached), CacheRead: migrate.Tokens(u.Cached), Output: migrate.Tokens(u.Output), TotalTokens: migrate.Tokens(u.Total)}
		}
	case "turn_aborted":
		if c.last != nil {
			c.last.a.StopReason = "aborted"
		}
	case "user_message":
		if !haveUser {
			if s := jsonString(it.Message); s != "" {
				c.user([]part{{Type: "input_text", Text: s}})
			}
		}
	case "agent_message":
		if !haveAsst {
			if s := jsonString(it.Message); s != "" {
				a := c.open()
				a.a.Content = append(a.a.Content, migrate.TextBlock(s))
			}
		}
	}
}

func jsonString(raw json.RawMessage) string {
	s, _ := jsonl.String(bytes.TrimSpace(raw))
	return s
}

// findString returns the first string member named k anywhere in raw.
func findString(raw json.RawMessage, k string) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x[k].(string); ok && s != "" {
				return s
			}
			keys := make([]string, 0, len(x))
			for key := range x {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				if s := walk(x[key]); s != "" {
					return s
				}
			}
		case []any:
			for _, e := range x {
				if s := walk(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(v)
}
