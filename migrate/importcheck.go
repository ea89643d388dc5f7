package migrate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// ErrNotImported is matched by errors.Is for the error CheckReplace
// returns when the file a re-import would replace is not an untouched
// earlier import of the same session: entries were added since (the
// session was continued in pi), or it is another session altogether.
var ErrNotImported = errors.New("not an untouched earlier import of this session")

// CheckReplace decides whether the session file holding current may be
// replaced by a new import of the session sessionID. It may when current
// is an earlier import of that session that nobody has changed since: its
// header has the session id, and the digest its provenance entry records
// still matches the lines after it.
func CheckReplace(current []byte, sessionID string) error {
	return CheckReplaceFrom(bytes.NewReader(current), sessionID)
}

// checkHeadMax bounds how much of a file CheckReplaceFrom reads looking
// for its header and provenance entry, which are far shorter.
const checkHeadMax = 1 << 20

// CheckReplaceFrom is CheckReplace reading the current file from r as it
// goes: it holds its first lines (up to the provenance entry) and hashes
// the rest.
func CheckReplaceFrom(r io.Reader, sessionID string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var head []byte
	var p *jsonl.Parsed
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err == bufio.ErrBufferFull && len(head) <= checkHeadMax {
			continue
		}
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return fmt.Errorf("read existing file: %w", err)
		}
		p = jsonl.ParseFile(head)
		if len(p.Entries) >= 2 || err != nil || len(head) > checkHeadMax {
			break
		}
	}
	if len(p.Entries) < 2 || !p.Entries[0].IsHeader() {
		return fmt.Errorf("existing file has no session header: %w", ErrNotImported)
	}
	h := p.Entries[0]
	if h.IDKind != jsonl.KindString || h.ID != sessionID {
		return fmt.Errorf("existing file is session %s: %w", jsonl.KeyString(h.ID), ErrNotImported)
	}
	prov := p.Entries[1]
	if ct, _ := prov.StringField("customType"); prov.Type != jsonl.TypeCustom || ct != ImportType {
		return fmt.Errorf("existing file does not start with an import record: %w", ErrNotImported)
	}
	data, _ := prov.Field("data")
	want, _ := jsonl.String(lookup(data, "digest"))
	end := int(prov.Offset) + len(prov.Raw)
	if end < len(head) && head[end] == '\n' {
		end++
	}
	digest := sha256.New()
	digest.Write(head[end:])
	if _, err := io.Copy(digest, br); err != nil {
		return fmt.Errorf("read existing file: %w", err)
	}
	if want == "" || hex.EncodeToString(digest.Sum(nil)) != want {
		return fmt.Errorf("existing file was changed after it was imported: %w", ErrNotImported)
	}
	return nil
}

func lookup(obj []byte, k string) []byte {
	v, _ := jsonl.Lookup(obj, k)
	return v
}

// ImportRecord is what the provenance entry of an imported session says
// (see ImportType).
type ImportRecord struct {
	Source         string
	SourcePath     string
	SourceID       string
	SourceVersion  string
	ParentSourceID string
	// DateFrom is DateFromMtime when the session's times are its source
	// file's modification time, "" when they are the source's own.
	DateFrom string
	// PromptOnly is true for a session rebuilt from a prompt history
	// whose transcript is gone.
	PromptOnly bool
}

// DateFromFile reports whether the session's times are its source file's
// modification time.
func (r *ImportRecord) DateFromFile() bool { return r.DateFrom == DateFromMtime }

// ReadImportRecord returns the record of e when it is a provenance entry
// (a custom entry of type ImportType); sessctl writes it as the first
// entry after the header.
func ReadImportRecord(e *tree.Entry) (*ImportRecord, bool) {
	if e == nil || e.Type != jsonl.TypeCustom {
		return nil, false
	}
	if ct, _ := e.StringField("customType"); ct != ImportType {
		return nil, false
	}
	data, _ := e.Field("data")
	str := func(k string) string {
		s, _ := jsonl.String(lookup(data, k))
		return s
	}
	return &ImportRecord{
		Source:         str("source"),
		SourcePath:     str("sourcePath"),
		SourceID:       str("sourceId"),
		SourceVersion:  str("sourceVersion"),
		ParentSourceID: str("parentSourceId"),
		DateFrom:       str("dateFrom"),
		PromptOnly:     string(lookup(data, "promptOnly")) == "true",
	}, true
}

// ReadImportRecordHead returns the import record of a session file from
// the first bytes of it (its header line and the line after), as far as
// they are given; false when the second line is not a provenance entry
// or not complete in head.
func ReadImportRecordHead(head []byte) (*ImportRecord, bool) {
	nl := bytes.IndexByte(head, '\n')
	if nl < 0 {
		return nil, false
	}
	rest := head[nl+1:]
	end := bytes.IndexByte(rest, '\n')
	if end < 0 {
		return nil, false
	}
	e, err := jsonl.ParseEntry(bytes.TrimRight(rest[:end], "\r"))
	if err != nil {
		return nil, false
	}
	return ReadImportRecord(&e)
}
