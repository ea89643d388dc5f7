package compaction

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUTF16Len(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"日本", 2},
		{"😀", 2},
		{"a😀b", 4},
		{"\xff", 1}, // read as U+FFFD
		// Node's Buffer#toString: one U+FFFD per maximal subpart.
		{"\xe2\x82a", 2},
		{"\xf0\x9f\x98", 1},
		{"\xed\xa0\x80", 3},
		{"\xf4\x90\x80\x80", 4},
	}
	for _, tc := range tests {
		if got := UTF16Len(tc.s); got != tc.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  string
		want int
	}{
		{"user string", `{"role":"user","content":"abcde"}`, 2},
		{"user emoji counts two units each", `{"role":"user","content":"😀😀"}`, 1},
		{"user blocks, an image counts 4800 (pi 1.x)", `{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image","data":"QUJD","mimeType":"image/png"},{"type":"text","text":"efgh"}]}`, 1202},
		{"system content, sections and tools", `{"role":"system","content":"abcd","sections":{"a":"efgh","b":null},"toolsAdded":[{"name":"x"}],"timestamp":0}`, 6},
		{"assistant text thinking and tool call", `{"role":"assistant","content":[{"type":"text","text":"abcd"},{"type":"thinking","thinking":"abcd"},{"type":"toolCall","id":"1","name":"read","arguments":{"path":"a.ts"}}]}`, 7},
		// name 2 + {"1":2,"2":1,"b":"<&>","a":"é"} (31 units) = 33 chars
		{"tool call arguments in JavaScript key order, unescaped", `{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"go","arguments":{"b":"\u003c&>","a":"\u00e9","2":1,"1":2.0}}]}`, 9},
		{"tool result image costs 1200", `{"role":"toolResult","content":[{"type":"text","text":"abcd"},{"type":"image","data":"x","mimeType":"image/png"}]}`, 1201},
		{"custom string", `{"role":"custom","content":"abcdefgh"}`, 2},
		{"bash counts command and output, even excluded", `{"role":"bashExecution","command":"ls","output":"abcdef","excludeFromContext":true}`, 2},
		{"branch summary", `{"role":"branchSummary","summary":"abcdefghi"}`, 3},
		{"compaction summary", `{"role":"compactionSummary","summary":"abcd"}`, 1},
		{"unknown role", `{"role":"other","content":"abcdefgh"}`, 0},
		{"not an object", `"hello"`, 0},
		{"malformed text counts 0", `{"role":"assistant","content":[{"type":"text"}]}`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := EstimateTokens([]byte(tc.msg)); got != tc.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestStringifyKeyOrder(t *testing.T) {
	t.Parallel()
	got := stringify([]byte(`{"b":"\u003c&>", "a":"\u00e9", "2":1, "1":2.0}`))
	if want := `{"1":2,"2":1,"b":"<&>","a":"é"}`; got != want {
		t.Errorf("stringify = %s, want %s", got, want)
	}
}

func TestCalculateContextTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		usage string
		want  float64
	}{
		{"total from usage", `{"input":1000,"output":500,"cacheRead":200,"cacheWrite":100,"totalTokens":1800}`, 1800},
		{"zeros", `{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0}`, 0},
		{"missing total falls back to the sum", `{"input":1000,"output":500,"cacheRead":200,"cacheWrite":100}`, 1800},
		{"zero total falls back to the sum", `{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":0}`, 10},
		{"missing component is NaN", `{"input":1,"output":2}`, math.NaN()},
		{"null component counts 0", `{"input":1,"output":2,"cacheRead":null,"cacheWrite":4}`, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CalculateContextTokens([]byte(tc.usage))
			if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("CalculateContextTokens = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEstimateContextTokens(t *testing.T) {
	t.Parallel()
	msg := func(s string) Message { return Message{Raw: []byte(s)} }
	user := msg(`{"role":"user","content":"` + strings.Repeat("x", 40) + `"}`) // 10 tokens
	good := msg(`{"role":"assistant","content":[],"usage":{"totalTokens":500},"stopReason":"stop"}`)
	newer := msg(`{"role":"assistant","content":[],"usage":{"totalTokens":700},"stopReason":"toolUse"}`)
	aborted := msg(`{"role":"assistant","content":[],"usage":{"totalTokens":900},"stopReason":"aborted"}`)
	errored := msg(`{"role":"assistant","content":[],"usage":{"totalTokens":900},"stopReason":"error"}`)
	noUsage := msg(`{"role":"assistant","content":[{"type":"text","text":"abcd"}],"stopReason":"stop"}`)
	tests := []struct {
		name string
		msgs []Message
		want ContextEstimate
	}{
		{"no usage sums estimates", []Message{user, noUsage, user}, ContextEstimate{Tokens: 21, TrailingTokens: 21, LastUsageIndex: -1}},
		{"last valid usage plus trailing", []Message{user, good, user, user}, ContextEstimate{Tokens: 520, UsageTokens: 500, TrailingTokens: 20, LastUsageIndex: 1}},
		{"newest valid usage wins", []Message{good, newer, user}, ContextEstimate{Tokens: 710, UsageTokens: 700, TrailingTokens: 10, LastUsageIndex: 1}},
		{"aborted and error usage skipped", []Message{good, aborted, errored, user}, ContextEstimate{Tokens: 510, UsageTokens: 500, TrailingTokens: 10, LastUsageIndex: 0}},
		{"empty", nil, ContextEstimate{LastUsageIndex: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, EstimateContextTokens(tc.msgs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShouldCompact(t *testing.T) {
	t.Parallel()
	s := Settings{Enabled: true, ReserveTokens: 10000, KeepRecentTokens: 20000}
	tests := []struct {
		name           string
		tokens, window float64
		s              Settings
		want           bool
	}{
		{"over the threshold", 95000, 100000, s, true},
		{"under the threshold", 89000, 100000, s, false},
		{"exactly at the threshold", 90000, 100000, s, false},
		{"disabled", 95000, 100000, Settings{ReserveTokens: 10000}, false},
		{"no context window", 1, 0, s, true},
		{"NaN never triggers", math.NaN(), 100000, s, false},
	}
	for _, tc := range tests {
		if got := ShouldCompact(tc.tokens, tc.window, tc.s); got != tc.want {
			t.Errorf("%s: ShouldCompact = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	// JavaScript sorts by UTF-16 units: U+FF5E (a BMP character above the
	// surrogates) sorts after U+1F600, whose first unit is 0xD83D.
	got := []string{"b", "～", "😀", "a", "ab", ""}
	slices.SortFunc(got, CompareUTF16)
	want := []string{"", "a", "ab", "b", "😀", "～"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
}
