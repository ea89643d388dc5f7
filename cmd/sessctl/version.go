package main

import (
	"fmt"
	"runtime/debug"

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

// version is what --version prints: the module version the binary was
// built at ("go install ...@v1.2.0"), else "(devel)", with the commit
// when the build recorded one.
func version(info *debug.BuildInfo, ok bool) string {
	v := "(devel)"
	if !ok || info == nil {
		return v
	}
	if mv := info.Main.Version; mv != "" {
		v = mv
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (commit %s)", v, rev)
}
