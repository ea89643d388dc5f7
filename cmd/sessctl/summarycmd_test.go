package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestSummaryCommandLimits checks that a summary command that runs too
// long or prints too much is stopped with a clear error and exit 1 (not
// 2, the usage code), and that the session is left as it was.
func TestSummaryCommandLimits(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	_, cwd := mutStore(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "too slow", wantCode: exitFailure, wantErr: "timed out after 300ms; it was killed; nothing was written\nhint: the summary command ran out of time",
			args: []string{"--summary-cmd", "sleep 1000", "--summary-timeout", "300ms"}},
		{name: "endless output", wantCode: exitFailure, wantErr: "it printed more than 1024 bytes and was killed; nothing was written\nhint: a summary should be short",
			args: []string{"--summary-cmd", "yes", "--summary-max-bytes", "1K"}},
		{name: "endless output, default bound", wantCode: exitFailure, wantErr: "it printed more than 4194304 bytes",
			args: []string{"--summary-cmd", "yes"}},
		{name: "no limits", wantCode: exitOK,
			args: []string{"--summary-cmd", "printf short", "--summary-timeout", "0", "--summary-max-bytes", "0"}},
		{name: "timeout without a command", wantCode: exitUsage, wantErr: "--summary-timeout needs --summary-cmd",
			args: []string{"--summary-timeout", "1m"}},
		{name: "size without a command", wantCode: exitUsage, wantErr: "--summary-max-bytes needs --summary-cmd",
			args: []string{"--summary-max-bytes", "1M"}},
		{name: "bad size", wantCode: exitUsage, wantErr: "not a size",
			args: []string{"--summary-cmd", "true", "--summary-max-bytes", "lots"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := mutSession(t, cwd)
			before := mustRead(t, src)
			_, errOut, code := mutRun(t, "", append([]string{"compact", src, "--keep-tokens", "30"}, tc.args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
			}
			if tc.wantCode == exitOK {
				return
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tc.wantErr)
			}
			if mustRead(t, src) != before {
				t.Errorf("the session changed")
			}
		})
	}
}
