package migrate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// This file is the contract every importer of a foreign agent's store
// implements, and the result they share. The importers themselves live in
// the subpackages (claude, codex, gemini, cursor, windsurf, opencode,
// agsh, goose, crush); the list of them is migrate/sources.

// Source is one foreign agent whose sessions can be imported: it knows
// where the agent keeps its store, recognises one, and opens it.
type Source interface {
	// Name is the source's command-line name: "claude", "codex", ...
	Name() string
	// Title is the agent's name for people: "Claude Code", "Codex", ...
	Title() string
	// Locations returns the places the agent keeps its store on this
	// machine, as its own defaults and environment overrides say. They
	// need not exist.
	Locations(loc Locator) []string
	// Detect reports whether path, a directory or a file, holds a store of
	// this source (or one session of it).
	Detect(path string) bool
	// Open opens the store at path for reading. Nothing is ever written
	// into it.
	Open(ctx context.Context, path string, opts ImportOptions) (Reader, error)
}

// Reader reads an opened foreign store: it lists the store's sessions and
// converts them, and never writes into it.
type Reader interface {
	// Sessions lists the store's sessions, parents before children where
	// the source links them. A problem with one file of the store is
	// yielded as an error (a *Damage where it is one) and the listing
	// goes on.
	Sessions(ctx context.Context) iter.Seq2[Ref, error]
	// Convert reads one listed session and converts it, with the
	// subagent sessions that belong to it, into v3 sessions. Damaged
	// lines or rows are skipped and reported in Conversion.Damage; an
	// error means nothing of the session could be converted.
	Convert(ctx context.Context, ref Ref) (*Conversion, error)
	// Close releases what Open took (temporary copies of databases).
	Close() error
}

// Ref names one session of a store.
type Ref struct {
	ID   string // the session's id in the source
	Path string // the file or database it lives in
	Key  string // the store's own handle; opaque to callers
}

// Locator is what Source.Locations reads: the environment, the home
// directory and the operating system. Importers never read the process
// environment themselves.
type Locator struct {
	Getenv layout.Env // nil reads nothing
	Home   string
	GOOS   string // runtime.GOOS in production
}

// Env returns the variable k, or "".
func (l Locator) Env(k string) string {
	if l.Getenv == nil {
		return ""
	}
	return l.Getenv(k)
}

// ImportOptions configure Source.Open.
type ImportOptions struct {
	// Cwd is the working directory given to sessions whose source records
	// none (agsh, Windsurf without one, Gemini when no project root can be
	// found). "" leaves them with "".
	Cwd string
	// TempDir is where database stores are copied before they are read
	// (a database in WAL mode cannot be opened read-only in place without
	// touching its -shm file). "" means os.TempDir().
	TempDir string
	// Progress, when not nil, is told how far Convert has read a source
	// file: the file, the bytes read so far and its size. It is called
	// from the goroutine that calls Convert, after every read of the
	// file's session data, so that a caller can show progress inside one
	// large session. Sources read from a database (Cursor, opencode's
	// opencode.db, agsh) and from one JSON file per message (opencode's
	// JSON storage) do not report it.
	Progress func(path string, done, total int64)
	// History asks the Claude Code importer to import, besides the
	// transcripts, the prompts history.jsonl lists of sessions whose
	// transcripts are gone, as prompt-only sessions (Imported.PromptOnly).
	// Other sources ignore it.
	History bool
	// MaxLine bounds one line of a source file, so that memory does not
	// follow a file (a compressed Codex rollout) that expands to one
	// endless line: a longer line is skipped and reported as damage at
	// its line. 0 means DefaultMaxLine.
	MaxLine int
	// FS is the filesystem the source stores are found, looked at and
	// read through; nil means vfs.OS(). SQLite databases are opened by
	// the driver by path (a database read in place must be on the real
	// filesystem; a copy is made there). Detect, which takes no options,
	// looks at the real filesystem.
	FS vfs.FS
}

// Conversion is what Convert makes of one source session.
type Conversion struct {
	// Sessions are the converted sessions: the main session first, then
	// its subagent sessions (each after its parent).
	Sessions []*Imported
	// Damage lists the damaged lines or rows that were skipped.
	Damage []*Damage
	// Skipped lists the listed sessions (this one or a subagent of it)
	// that were read without damage but give no session, each with the
	// reason: an importer never drops a session without saying so.
	Skipped []*Skip
}

// Skip is a source session that was read but not imported.
type Skip struct {
	SourceID string // the session's id in the source
	Path     string // the file or database it lives in
	Reason   string // why, for people: "no messages", ...
}

// SkipEmpty is the reason given for a session without any message.
const SkipEmpty = "no messages"

// Imported is one converted session, ready to be written: its header
// fields and its entry lines. Entries are in the order that makes the
// source's active branch the last line, so pi's leaf is right.
type Imported struct {
	Source     string // the source's Name
	SourceID   string // the session's id in the source
	SourcePath string // the file or database it was read from, as its provenance names it
	// ReadFrom is the file actually read when it is not SourcePath: a
	// compressed form of it (Codex's rollout-*.jsonl.zst, whose
	// provenance names the plain .jsonl so that compressing it changes
	// nothing). "" otherwise.
	ReadFrom       string
	SourceVersion  string    // the agent's version, when recorded
	ParentSourceID string    // the source id of the session this one is a subagent of
	ID             string    // the pi session id, derived from Source and SourceID
	Start          time.Time // the session's start, from the source
	Cwd            string    // the working directory, from the source (or ImportOptions.Cwd)
	CwdKnown       bool      // false when Cwd is the fallback
	Name           string    // the title, when the source has one
	Lines          [][]byte  // the entry lines, without header and newlines
	Messages       int       // message and custom_message entries

	// DateFromFile is true when the source holds no date for the session,
	// so Start and the entries' times are the source file's modification
	// time; the provenance entry says so ("dateFrom": "mtime").
	DateFromFile bool
	// PromptOnly is true for a session rebuilt from a prompt history
	// whose transcript is gone (Claude Code's history.jsonl); the
	// provenance entry says so ("promptOnly": true).
	PromptOnly bool

	// A large session's lines are kept in a temporary file rather than in
	// Lines (which is then nil): the provenance line in prov, the others
	// in sp from body on. err is an error reading or writing it.
	sp            *spill
	prov          []byte
	body, bodyLen int64
	entries       int
	err           error
}

// Entries returns the number of entry lines (the header excluded).
func (s *Imported) Entries() int {
	if s.sp != nil {
		return s.entries
	}
	return len(s.Lines)
}

// Close releases the temporary file a large session's lines are kept in
// while it waits to be written (Lines is nil for such a session; Write
// reads it). The session can no longer be written afterwards. Close of a
// session kept in memory does nothing.
func (s *Imported) Close() error {
	if s.sp == nil {
		return nil
	}
	err := s.sp.Close()
	s.err = errImportedClosed
	return err
}

var errImportedClosed = errors.New("imported session closed")

// Write writes the whole session file to w, as Bytes returns it, without
// holding it in memory when it is large.
func (s *Imported) Write(w io.Writer, parentSession string) error {
	if s.err != nil {
		return fmt.Errorf("session %s: %w", s.ID, s.err)
	}
	var ps *string
	if parentSession != "" {
		ps = &parentSession
	}
	head := append(jsonl.NewHeaderLine(s.ID, s.Start, s.Cwd, ps), '\n')
	if s.sp == nil {
		bw := bufio.NewWriterSize(w, 256<<10)
		bw.Write(head)
		for _, l := range s.Lines {
			bw.Write(l)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	}
	if _, err := w.Write(append(append(head, s.prov...), '\n')); err != nil {
		return err
	}
	body, err := s.sp.section(s.body, s.bodyLen)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.ID, err)
	}
	_, err = io.CopyBuffer(struct{ io.Writer }{w}, body, make([]byte, 256<<10))
	return err
}

// FileName returns the name pi would give the session file:
// "<start>_<id>.jsonl".
func (s *Imported) FileName() string { return layout.SessionFileName(s.Start, s.ID) }

// Bytes returns the whole session file: the header, naming parentSession
// when it is not "", and every entry line, each ending in '\n'.
// A large session's (see Close) is read from its temporary file; an
// error reading it gives the bytes read so far.
func (s *Imported) Bytes(parentSession string) []byte {
	if s.sp != nil || s.err != nil {
		var buf bytes.Buffer
		_ = s.Write(&buf, parentSession)
		return buf.Bytes()
	}
	var ps *string
	if parentSession != "" {
		ps = &parentSession
	}
	n := 256
	for _, l := range s.Lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, jsonl.NewHeaderLine(s.ID, s.Start, s.Cwd, ps)...)
	out = append(out, '\n')
	for _, l := range s.Lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// SessionID returns the pi session id of the source session sourceID: a
// UUID (version 8, "custom") made from SHA-256 of the source name and the
// id, so that importing the same session again names the same file.
func SessionID(source, sourceID string) string {
	h := sha256.Sum256([]byte("sessctl-import\x00" + source + "\x00" + sourceID))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// ErrDamaged is matched by errors.Is for every *Damage.
var ErrDamaged = errors.New("damaged source data")

// Damage is a part of a source store that could not be read: a line of a
// file, a row of a database, or a whole file. The rest is imported.
type Damage struct {
	Path string // the file or database
	Line int    // 1-based line, 0 when not tied to a line
	Pos  string // another position, e.g. "message 12", when not a line
	Err  error
}

func (d *Damage) Error() string {
	switch {
	case d.Line > 0:
		return fmt.Sprintf("%s:%d: %v", d.Path, d.Line, d.Err)
	case d.Pos != "":
		return fmt.Sprintf("%s (%s): %v", d.Path, d.Pos, d.Err)
	}
	return fmt.Sprintf("%s: %v", d.Path, d.Err)
}

// Unwrap returns the cause.
func (d *Damage) Unwrap() error { return d.Err }

// Is reports whether target is ErrDamaged.
func (d *Damage) Is(target error) bool { return target == ErrDamaged }
