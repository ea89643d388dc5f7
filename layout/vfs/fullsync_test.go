package vfs

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// TestFullSyncFallback checks when F_FULLFSYNC's failure falls back to
// fsync (macOS's logic, run here on every system): only when the
// filesystem does not support it, never to hide a real error.
func TestFullSyncFallback(t *testing.T) {
	t.Parallel()
	eio := syscall.EIO
	cases := []struct {
		name      string
		full      []error // results of successive full calls
		plain     error
		wantPlain bool
		want      error
	}{
		{"supported", []error{nil}, nil, false, nil},
		{"ENOTSUP (SMB)", []error{syscall.ENOTSUP}, nil, true, nil},
		{"EINVAL", []error{syscall.EINVAL}, nil, true, nil},
		{"ENOTTY", []error{syscall.ENOTTY}, nil, true, nil},
		{"wrapped ENOTSUP", []error{fmt.Errorf("fcntl: %w", syscall.ENOTSUP)}, nil, true, nil},
		{"fallback fails", []error{syscall.ENOTSUP}, eio, true, eio},
		{"EIO is not hidden", []error{eio}, nil, false, eio},
		{"EINTR retried", []error{syscall.EINTR, nil}, nil, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			calls, plained := 0, false
			err := fullSync(func() error {
				err := c.full[calls]
				calls++
				return err
			}, func() error { plained = true; return c.plain })
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("fullSync: %v, want %v", err, c.want)
			}
			if plained != c.wantPlain {
				t.Errorf("fell back to fsync: %v, want %v", plained, c.wantPlain)
			}
			if calls != len(c.full) {
				t.Errorf("full called %d times, want %d", calls, len(c.full))
			}
		})
	}
}
