package release

import (
	"runtime/debug"
	"testing"
)

// TestDescribe checks what --version prints for each kind of build.
func TestDescribe(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	// A build that is not of a release tag names the release the tree
	// is, marked +dev between releases.
	dev := "v" + Version
	if Dev {
		dev += "+dev"
	}
	cases := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, dev},
		{"devel", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, dev},
		{"empty", &debug.BuildInfo{}, dev},
		{"tagged", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261127093000-0123456789ab"}}, dev + " (commit 0123456789ab)"},
		{"pseudo-version, dirty", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127093000-0123456789ab+dirty"}}, dev + " (commit 0123456789ab)"},
		{"commit", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, dev + " (commit 0123456789ab)"},
		{"modified", &debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, dev + " (commit 0123456789ab, modified)"},
	}
	for _, tc := range cases {
		if got := Describe(tc.info, tc.info != nil); got != tc.want {
			t.Errorf("%s: Describe = %q, want %q", tc.name, got, tc.want)
		}
	}
}
