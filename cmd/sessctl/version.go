package main

import (
	"fmt"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// warnVersion warns on stderr when a file read read-only has a header of
// a newer format version than sessctl knows: the read commands go on with
// what they understand, the writing ones refuse such files.
func (e *env) warnVersion(path string, header jsonl.Entry) {
	if v := migrate.VersionOf(&header); v > jsonl.CurrentVersion {
		fmt.Fprintf(e.stderr, "sessctl: %s: warning: %s is format version %s; this sessctl knows up to %d, entries may be misread\n",
			e.name, human.QuotePath(path), jsonl.AppendNumber(nil, v), jsonl.CurrentVersion)
	}
}
