package search

import (
	"strings"
	"testing"
	"time"
)

// TestHitWriteText checks a hit for people: its heading line, the
// snippet with the matches marked only when highlighting (and escaped
// then), the command line shell-quoted, and the JSON's "show".
func TestHitWriteText(t *testing.T) {
	t.Parallel()
	h := &Hit{Session: Session{ID: "0190aaaa", Name: "n", Cwd: "/w", Path: "/s.jsonl"}, Entry: "a1", Kind: KindUser,
		Time: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), Snippet: "say hello world", Matches: [][2]int{{4, 9}}}
	cmd := []string{"sessctl", "show", "/my dir/s.jsonl"}
	var b strings.Builder
	if err := h.WriteText(&b, TextOptions{ID: "0190", Command: cmd}); err != nil {
		t.Fatal(err)
	}
	want := "2026-03-01 09:00:00  user [a1]  0190 \"n\"  /w\n    say hello world\n    sessctl show '/my dir/s.jsonl'\n\n"
	if b.String() != want {
		t.Errorf("plain:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	_ = h.WriteText(&b, TextOptions{Highlight: true, MatchStart: "<", MatchEnd: ">", Escape: strings.ToUpper})
	if want := "    SAY <HELLO> WORLD\n"; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "0190AAAA") {
		t.Errorf("highlighted:\n%q\nwant %q and the full id, escaped", b.String(), want)
	}
	b.Reset()
	if err := h.WriteJSON(&b, cmd); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), `,"show":["sessctl","show","/my dir/s.jsonl"]}`+"\n") {
		t.Errorf("JSON: %s", b.String())
	}
}
