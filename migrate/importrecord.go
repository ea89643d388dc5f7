package migrate

import (
	"io"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// ImportRecordOf returns the record of a session's provenance entry, its
// first entry after the header (entries may hold the header or not), when
// it has one.
func ImportRecordOf(entries []*tree.Entry) (*ImportRecord, bool) {
	for _, e := range entries {
		if e.IsHeader() {
			continue
		}
		return ReadImportRecord(e)
	}
	return nil, false
}

// importHeadMax is how much of a session file ImportedDateFromFile reads:
// the header and the provenance entry are far shorter.
const importHeadMax = 64 << 10

// ImportedDateFromFile reports whether the session file at path, whose
// header id is id, is an import whose source held no date, so that its
// times are the source file's modification time (its provenance entry
// says "dateFrom": "mtime"). Only files with an id an import gives (a
// version 8 UUID; pi's are version 7) are opened, and only their
// beginning is read.
func ImportedDateFromFile(path, id string) bool {
	if len(id) != 36 || id[14] != '8' {
		return false
	}
	f, err := vfs.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, importHeadMax))
	rec, ok := ReadImportRecordHead(head)
	return ok && rec.DateFromFile()
}
