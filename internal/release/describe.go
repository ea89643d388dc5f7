package release

import (
	"fmt"
	"regexp"
	"runtime/debug"
)

// Describe is the version a binary reports (sessctl --version), from its
// build information (info and ok as debug.ReadBuildInfo returns them):
// the module version the binary was built at when it is a release tag
// ("go install ...@v1.2.0"), else the release the tree is (Version),
// marked "+dev" for a tree with changes after it, with the commit when
// the build recorded one (or a pseudo-version names it).
func Describe(info *debug.BuildInfo, ok bool) string {
	v := "v" + Version
	if Dev {
		v += "+dev"
	}
	if !ok || info == nil {
		return v
	}
	var rev string
	mv := info.Main.Version
	if releaseTag.MatchString(mv) {
		return mv
	}
	if m := pseudoRev.FindStringSubmatch(mv); m != nil {
		rev = m[1]
	}
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

// releaseTag is a release's module version.
var releaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// pseudoRev finds the commit in a pseudo-version (v0.0.0-20261127093000-0123456789ab).
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(?:\+.*)?$`)
