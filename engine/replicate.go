package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// Replicator is told about a write-mode session's file as it grows, so
// that it can ship the new lines elsewhere (package replica implements it
// for S3-compatible storage). The engine never waits for the network: a
// Replicator must return from Appended at once and do its work in the
// background.
type Replicator interface {
	// Appended reports that the session file at path (absolute) holds new
	// complete lines, synced to stable storage under SyncEach. It is
	// called with the session's lock held, after every successful write,
	// and must not block.
	Appended(path string)
	// Closed reports that the session writing path was closed after
	// writing to it. It may wait, for a bounded time, until what was
	// reported has been shipped; the session's Close returns after it.
	Closed(path string)
}

// Leaser is implemented by a Replicator that also keeps a session to one
// writer across machines (package replica's, with its Lease option): the
// local writer lock keeps out the other writers of this machine, a lease
// on the remote those of the machines sharing it. The engine calls Lease
// when it opens or creates a session for writing, right after it took the
// local writer lock, and releases the lease when the session's Close
// releases that lock; every write first asks the lease whether it is
// still held.
type Leaser interface {
	// Lease takes the lease of the session file at path (absolute), or
	// returns nil when the session needs none. While another machine
	// holds it, Lease fails with an error matching ErrLocked (a
	// *LockedError naming the holder), or, when wait is true
	// (OpenOptions.Wait), waits until it is free or ctx is done.
	Lease(ctx context.Context, path string, wait bool) (WriterLease, error)
}

// WriterLease is a session's lease on its remote copy, held from a
// write-mode open to Close (see Leaser).
type WriterLease interface {
	// Valid returns nil while the lease is held; a write is refused with
	// its error otherwise (nothing is written; the write may be tried
	// again once the lease is held again).
	Valid() error
	// Release gives the lease up. It may wait, for a bounded time, until
	// what was written has been shipped.
	Release() error
}

// takeLease takes the lease of the session's file when the store's
// Replicator is a Leaser (s.lk held, s.file set).
func (s *Session) takeLease(ctx context.Context) error {
	ls, ok := s.opts.Replicator.(Leaser)
	if !ok || s.file == "" {
		return nil
	}
	wl, err := ls.Lease(ctx, s.file, s.opts.Wait)
	if err != nil {
		return fmt.Errorf("open session %s for writing: %w", s.file, err)
	}
	s.lease = wl
	return nil
}

// releaseLease gives the lease up, if the session holds one.
func (s *Session) releaseLease() error {
	if s.lease == nil {
		return nil
	}
	err := s.lease.Release()
	s.lease = nil
	return err
}

// AppendLines appends complete entry lines byte for byte, as they were
// read from another copy of the session (replication's merge). Each line
// must be one JSON object with a string id that is new to the session
// (else ErrDuplicateID) and not a header, and a message entry's message an
// object with a string role (any role: an extension's too, which pi
// keeps); its parentId must name an entry of the session or an earlier
// line of the call, or be null (a parent that is missing, or the entry
// itself, is refused: pi cannot load such a file). All lines are
// written with one write (synced under SyncEach) and indexed; the leaf
// moves to the last one, as a reload would put it. The session's file must
// exist (a new session's file is written by its first append or Flush).
// Nothing is written when a line is refused.
func (s *Session) AppendLines(lines [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if len(lines) == 0 {
		return nil
	}
	parse := func() ([]Entry, error) {
		seen := make(map[string]bool, len(lines))
		es := make([]Entry, 0, len(lines))
		for i, l := range lines {
			if bytes.IndexByte(l, '\n') >= 0 {
				return nil, fmt.Errorf("append lines to %s: line %d holds a newline", s.file, i+1)
			}
			e, err := jsonl.ParseEntry(l)
			if err != nil {
				return nil, fmt.Errorf("append lines to %s: line %d: %w", s.file, i+1, err)
			}
			if e.IsHeader() || e.IDKind != jsonl.KindString {
				return nil, fmt.Errorf("append lines to %s: line %d is not an entry with a string id", s.file, i+1)
			}
			if e.Type == jsonl.TypeMessage && (!e.HasMessage() || e.Role == "") {
				// pi drops such a session from its list, or fails to open it.
				return nil, fmt.Errorf("append lines to %s: line %d is a message entry without a message object with a string role", s.file, i+1)
			}
			k := tree.Key(&e)
			if seen[k] || s.ix.Has(k) {
				return nil, fmt.Errorf("append lines to %s: entry %s: %w", s.file, jsonl.KeyString(e.ID), ErrDuplicateID)
			}
			// pi loads only a tree: a parent before its child, never
			// itself (pi never finishes loading a self-parent).
			if p, ok := tree.ParentKey(&e); ok && (e.ParentKind != jsonl.KindString || !(seen[p] || s.ix.Has(p))) {
				why := "is not in the session before it"
				if p == k {
					why = "is the entry itself"
				}
				return nil, fmt.Errorf("append lines to %s: line %d: the parent of entry %s %s", s.file, i+1, jsonl.KeyString(e.ID), why)
			}
			seen[k] = true
			es = append(es, e)
		}
		return es, nil
	}
	if _, err := parse(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	if !s.persist || !s.onDisk {
		return fmt.Errorf("append lines to %s: the session file is not written yet", s.file)
	}
	// begin may have read lines another process appended: check again.
	es, err := parse()
	if err != nil {
		return err
	}
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := make([]byte, 0, n)
	for _, l := range lines {
		buf = append(buf, l...)
		buf = append(buf, '\n')
	}
	if err := s.writeAppend(buf); err != nil {
		return err
	}
	for i := range es {
		e := es[i]
		// The entry's bytes are the copy in buf, which the session keeps.
		e.Raw = buf[:len(lines[i])]
		buf = buf[len(lines[i])+1:]
		s.ix.Add(s.newEntry(e))
		if isConversation(&e) {
			s.hasConversation = true
		}
	}
	s.chainOK = ""
	s.leafMoved = false
	s.unwritten = s.ix.Len()
	return nil
}

// replicated tells the Replicator, if there is one, that the file grew.
func (s *Session) replicated() {
	if s.opts.Replicator != nil && s.file != "" {
		s.opts.Replicator.Appended(s.file)
		s.shipped = true
	}
}
