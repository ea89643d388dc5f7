package search

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in    string
		upper bool
		want  time.Time
	}{
		{"2026-03-01", false, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-03-01", true, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{"2026-03-01T09:30", true, time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)},
		{"2026-03-01T09:30:15+02:00", false, time.Date(2026, 3, 1, 7, 30, 15, 0, time.UTC)},
		{"7d", false, now.Add(-7 * 24 * time.Hour)},
		{"12h", true, now.Add(-12 * time.Hour)},
		{"2w", false, now.Add(-14 * 24 * time.Hour)},
	}
	for _, tc := range cases {
		got, err := ParseTime(tc.in, now, tc.upper)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q, %v) = %v, %v; want %v", tc.in, tc.upper, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-3d", "2026-13-01"} {
		if _, err := ParseTime(bad, now, false); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

// TestHitLabelAndJSON checks what 'sessctl search' shows of a hit: its
// label, and its JSON shape with the time in milliseconds and matches
// never null.
func TestHitLabelAndJSON(t *testing.T) {
	h := &Hit{Session: Session{Path: "/s.jsonl", ID: "id"}, Entry: "e1", Kind: KindToolCall, Tool: "bash",
		Time: time.Date(2026, 3, 1, 9, 30, 0, 5e6, time.UTC)}
	if got := h.Label(); got != "tool call bash" {
		t.Errorf("Label = %q", got)
	}
	j := h.JSON()
	if j.Timestamp != "2026-03-01T09:30:00.005Z" || j.Matches == nil || j.Kind != "toolCall" {
		t.Errorf("JSON = %+v", j)
	}
	h.Time = time.Time{}
	if j := h.JSON(); j.Timestamp != "" {
		t.Errorf("a hit without a time has timestamp %q", j.Timestamp)
	}
}
