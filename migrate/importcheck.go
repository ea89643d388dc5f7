package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
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
	p := jsonl.ParseFile(current)
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
	if end < len(current) && current[end] == '\n' {
		end++
	}
	got := sha256.Sum256(current[end:])
	if want == "" || hex.EncodeToString(got[:]) != want {
		return fmt.Errorf("existing file was changed after it was imported: %w", ErrNotImported)
	}
	return nil
}

func lookup(obj []byte, k string) []byte {
	v, _ := jsonl.Lookup(obj, k)
	return v
}
