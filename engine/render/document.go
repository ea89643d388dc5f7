package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// Session is what the renderers show of a session: its file, header,
// name, entries and labels. Snapshot takes one from an open session; a
// caller may also fill one in.
type Session struct {
	Path    string        // the session file
	Header  engine.Header // the header as stored
	Name    string        // the name of the latest session_info entry
	HasName bool
	Entries []*engine.Entry   // every entry of the file, in file order, without the header
	Leaf    string            // the leaf's id; "" when the leaf is null or not a string
	Labels  map[string]string // entry id -> its label

	// view, when not nil, is the View the session was taken from: its
	// Entries and the branches given with it are without the bytes of
	// their messages, which the renderers read back from it one window
	// at a time (SnapshotView).
	view *engine.View
	// whole is the session Open read whole; opened says that Open
	// opened view (Close closes what Open opened).
	whole  *engine.Session
	opened bool
}

// Snapshot returns what the renderers show of the open session s.
func Snapshot(s *engine.Session) *Session {
	sv := &Session{Path: s.SessionFile(), Header: s.Header()}
	sv.Name, sv.HasName = s.Name()
	sv.Entries = s.Entries()
	if id, ok := s.LeafID(); ok {
		sv.Leaf = id
	}
	sv.Labels = map[string]string{}
	s.Index(func(ix *tree.Index) {
		for _, l := range ix.Labels() {
			sv.Labels[l.Target] = l.Label
		}
	})
	return sv
}

// SnapshotView returns what the renderers show of the session file v
// reads. Its Entries, and the branches taken from v (View.BranchPath),
// hold the messages without their bytes: Transcript, Markdown, HTML and
// JSON read each message back from v as they come to it (View.Lines), so
// that a session is rendered holding a few megabytes of it at a time,
// whatever its size. v must stay open while they run.
func SnapshotView(v *engine.View) *Session {
	sv := &Session{Path: v.SessionFile(), Header: v.Header(), view: v}
	sv.Name, sv.HasName = v.Name()
	sv.Entries = v.Entries()
	if id, ok := v.LeafID(); ok {
		sv.Leaf = id
	}
	sv.Labels = map[string]string{}
	for _, l := range v.Labels() {
		sv.Labels[l.Target] = l.Label
	}
	return sv
}

// each calls fn with each entry of branch in order, with its bytes (read
// back from the View the session came from, when it came from one), and
// stops at the first error.
func (s *Session) each(branch []*jsonl.Entry, fn func(en *jsonl.Entry) error) error {
	if s.view == nil {
		for _, en := range branch {
			if err := fn(en); err != nil {
				return err
			}
		}
		return nil
	}
	for en, err := range s.view.Lines(branch) {
		if err != nil {
			return err
		}
		if err := fn(en); err != nil {
			return err
		}
	}
	return nil
}

// errStop ends an each early.
var errStop = errors.New("stop")

// Redactor masks secrets in what a document shows. Package redact's
// Rules is one.
type Redactor interface {
	// Header returns the header line masked, or an error.
	Header(line []byte) ([]byte, error)
	// Entry returns an entry line masked, or an error.
	Entry(line []byte) ([]byte, error)
	// String returns a text (the session's name, a label) masked.
	String(s string) string
}

// Options configure Markdown, HTML and JSON. The zero value renders the
// session as stored.
type Options struct {
	// Redactor, when not nil, masks the header, each entry of the branch
	// (one at a time, so a large session is not copied whole), the name
	// and the labels before they are rendered. Rendering fails closed:
	// when the Redactor cannot mask a line, it stops with an error
	// (matching ErrRedact) rather than show the line unmasked.
	Redactor Redactor
}

// ErrRedact is matched by the error of a document whose redaction failed.
var ErrRedact = errors.New("redaction failed")

// doc is the branch to render, redacted when asked.
type doc struct {
	s      *Session
	path   []*jsonl.Entry // as stored; view redacts an entry when asked
	red    Redactor
	header rview
	name   string
	labels map[string]string
	// edits is, per entry id, how its newest context edit (pi 1.x) on
	// the path changes it in the model context, and the edit's id.
	edits map[string]edit
}

// edit is a context edit of an entry.
type edit struct {
	omitted bool // else replaced
	id      string
}

// text is "omitted from the model context by <id>" (or "replaced in"),
// with code marking the id.
func (e edit) text(code func(string) string) string {
	how := "replaced in"
	if e.omitted {
		how = "omitted from"
	}
	return how + " the model context by " + code(e.id)
}

func newDoc(s *Session, path []*jsonl.Entry, opts Options) (*doc, error) {
	d := &doc{s: s, path: path, red: opts.Redactor, header: rview(s.Header.Raw), name: s.Name, labels: map[string]string{}}
	var edits []*jsonl.Entry
	for _, en := range path {
		if l, ok := s.Labels[en.ID]; ok && en.IDKind == jsonl.KindString {
			d.labels[en.ID] = l
		}
		if en.Type == jsonl.TypeContextEdit {
			edits = append(edits, en)
		}
	}
	if len(edits) > 0 {
		d.edits = map[string]edit{}
		if err := s.each(edits, func(en *jsonl.Entry) error {
			d.edits[entryField(en, "targetId").str()] = edit{omitted: entryField(en, "replacement").kind() == jsonl.KindNull, id: jsonl.KeyString(en.ID)}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if d.red == nil {
		return d, nil
	}
	// Paths, ids and times are not secrets; masking them only breaks the
	// export (a store path once came out as "<dir>/.[REDACTED].jsonl").
	h, err := d.red.Header(s.Header.Raw)
	if err != nil {
		return nil, fmt.Errorf("redact the header of %s: %w: %w", s.Path, ErrRedact, err)
	}
	d.header = rview(h)
	d.name = d.red.String(d.name)
	for k, l := range d.labels {
		d.labels[k] = d.red.String(l)
	}
	return d, nil
}

// write renders the branch with one of the document writers, buffered.
func write(w io.Writer, s *Session, branch []*jsonl.Entry, opts Options, render func(*doc, *bufio.Writer) error) error {
	d, err := newDoc(s, branch, opts)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := render(d, bw); err != nil {
		return err
	}
	return bw.Flush()
}

// view returns an entry of the branch as the document shows it: redacted
// when asked (one at a time, so a large session is not copied whole).
func (d *doc) view(en *jsonl.Entry) (*jsonl.Entry, error) {
	if d.red == nil {
		return en, nil
	}
	raw, err := d.red.Entry(en.Raw)
	if err == nil {
		var red jsonl.Entry
		if red, err = jsonl.ParseEntry(raw); err == nil {
			red.Line, red.Offset = en.Line, en.Offset
			return &red, nil
		}
	}
	return nil, fmt.Errorf("redact the entry on line %d of %s: %w: %w", en.Line, d.s.Path, ErrRedact, err)
}

// title is the session name, else the first user message, else the id.
func (d *doc) title() (string, error) {
	if d.s.HasName && strings.TrimSpace(d.name) != "" {
		return human.OneLine(d.name, 80), nil
	}
	title := ""
	err := d.s.each(d.path, func(en *jsonl.Entry) error {
		if en.Type != jsonl.TypeMessage || en.Role != "user" {
			return nil
		}
		en, err := d.view(en)
		if err != nil {
			return err
		}
		if t := human.OneLine(contentText(msgOf(en).get("content")), 80); t != "" {
			title = t
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return "", err
	}
	if title != "" {
		return title, nil
	}
	return "Session " + d.header.s("id"), nil
}

func (d *doc) leafID() (string, bool) {
	if len(d.path) == 0 {
		return "", false
	}
	last := d.path[len(d.path)-1]
	return jsonl.KeyString(last.ID), last.IDKind != jsonl.KindAbsent
}

// details are the session's facts, in order, for both document formats.
func (d *doc) details() [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("Session", d.header.s("id"))
	if d.s.HasName {
		add("Name", d.name)
	}
	add("Working directory", d.header.s("cwd"))
	add("Created", d.header.s("timestamp"))
	add("Parent session", d.header.s("parentSession"))
	leaf, _ := d.leafID()
	add("Leaf", leaf)
	add("Entries", fmt.Sprintf("%d on this branch, %d in the file", len(d.path), len(d.s.Entries)))
	return out
}
