package human

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"0", 0, ""},
		{"10s", 10 * time.Second, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"10", 0, "needs a unit"},
		{"1.5", 0, "needs a unit"},
		{"-5s", 0, "cannot be negative"},
		{"soon", 0, "not a duration"},
	}
	for _, tc := range cases {
		got, err := ParseDuration(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseDuration(%q): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseDuration(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.wantErr)
		case got != tc.want:
			t.Errorf("ParseDuration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"4M", 4 << 20, ""},
		{"4MiB", 4 << 20, ""},
		{"512K", 512 << 10, ""},
		{"1G", 1 << 30, ""},
		{"10B", 10, ""},
		{"-1", 0, "cannot be negative"},
		{"1.5M", 0, "not a size"},
		{"lots", 0, "not a size"},
		{"99999999999G", 0, "too large"},
	}
	for _, tc := range cases {
		got, err := ParseSize(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseSize(%q): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseSize(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.wantErr)
		case got != tc.want:
			t.Errorf("ParseSize(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if err == nil {
			if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
				t.Errorf("FormatSize(%d) = %q reads back as %d, %v", got, FormatSize(got), back, err)
			}
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "1d12h": 36 * time.Hour, "36h": 36 * time.Hour, "30m": 30 * time.Minute} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1d", "xd", "d", "5", "-3h"} {
		if _, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) succeeded", in)
		}
	}
}
