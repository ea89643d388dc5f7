package compaction

import (
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestShell(t *testing.T) {
	t.Parallel()
	want := &Command{Path: "sh", Args: []string{"-c", "summarise --fast"}, JSON: true, Timeout: time.Minute, MaxOutput: -1}
	if runtime.GOOS == "windows" {
		want.Path, want.Args[0] = "cmd", "/C"
	}
	if diff := cmp.Diff(want, Shell("summarise --fast", true, time.Minute, 0)); diff != "" {
		t.Errorf("Shell (-want +got):\n%s", diff)
	}
	if got := Shell("x", false, 0, 512).MaxOutput; got != 512 {
		t.Errorf("MaxOutput %d, want 512", got)
	}
}
