package compaction

import (
	"math"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Settings are pi's compaction settings (compaction.enabled,
// compaction.reserveTokens, compaction.keepRecentTokens in settings.json),
// plus what the summary requests need to know about the model. Values are
// taken literally, as pi keeps an explicit 0: start from DefaultSettings.
type Settings struct {
	// Enabled turns automatic compaction on (ShouldCompact). Manual
	// compaction ignores it.
	Enabled bool
	// ReserveTokens is the headroom left for the model's reply. It also
	// sizes the summary requests: 80% for the history summary, 50% for
	// the turn-prefix summary.
	ReserveTokens int
	// KeepRecentTokens is how many estimated tokens are kept verbatim
	// after the cut.
	KeepRecentTokens int
	// Reasoning says the summarising model supports reasoning; the
	// summary requests then ask it to reason at the session's thinking
	// level (Preparation.ThinkingLevel) unless that is "off", as pi
	// 0.73.1 does. Not a pi setting: pi reads it from the model.
	Reasoning bool
}

// DefaultSettings returns pi's DEFAULT_COMPACTION_SETTINGS: enabled,
// reserve 16384 tokens, keep 20000 tokens.
func DefaultSettings() Settings {
	return Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
}

// UTF16Len returns the length of s in UTF-16 code units, which is what
// JavaScript's string.length counts (each invalid UTF-8 sequence, read
// as one U+FFFD, counting 1).
func UTF16Len(s string) int { return jsonl.UTF16Len(s) }

// jsLen is the UTF-16 length of a raw JSON string value, 0 for anything
// else (pi would throw or count NaN on such malformed data).
func jsLen(v []byte) int {
	s, ok := jsonl.String(v)
	if !ok {
		return 0
	}
	return UTF16Len(s)
}

// fields returns the raw values of the named members of obj in one pass
// (the last of repeated keys, as JSON.parse keeps); absent members are nil.
func fields(obj []byte, keys ...string) [][]byte {
	out := make([][]byte, len(keys))
	if jsonl.KindOf(obj) != jsonl.KindObject {
		return out
	}
	_ = jsonl.Members(obj, func(m *jsonl.Member) bool {
		for i, k := range keys {
			if m.KeyIs(k) {
				out[i] = m.Value
			}
		}
		return true
	})
	return out
}

// str returns the string member key of obj.
func str(obj []byte, key string) string {
	v, _ := jsonl.Lookup(obj, key)
	s, _ := jsonl.String(v)
	return s
}

// roleOf returns the role of a message object, "" when it has none.
func roleOf(msg []byte) string {
	if jsonl.KindOf(msg) != jsonl.KindObject {
		return ""
	}
	return str(msg, "role")
}

// eachElem calls fn for each element of a JSON array; other values are
// ignored.
func eachElem(arr []byte, fn func(v []byte)) {
	if jsonl.KindOf(arr) != jsonl.KindArray {
		return
	}
	_ = jsonl.Elements(arr, func(v []byte) bool {
		fn(v)
		return true
	})
}

// EstimateTokens is pi 1.x's estimateTokens: ceil(chars / 4) of one
// message object, where chars counts UTF-16 units of
//
//   - system: its content (as below), the string values of its sections,
//     and JSON.stringify(toolsAdded);
//   - user, toolResult and custom: string content, or the text blocks
//     plus 4800 per image block (pi 0.73.1 counted no images in user
//     messages);
//   - assistant: text and thinking blocks, and for tool calls the name plus
//     JSON.stringify(arguments);
//   - bashExecution: command plus output;
//   - branchSummary and compactionSummary: the summary.
//
// Other roles count 0. Malformed members (a missing text, a non-array
// content) count 0 where pi would throw or produce NaN.
func EstimateTokens(msg []byte) int {
	f := fields(msg, "role", "content", "command", "output", "summary", "sections", "toolsAdded")
	role, _ := jsonl.String(f[0])
	chars := 0
	switch role {
	case "system":
		chars = contentChars(f[1])
		if jsonl.KindOf(f[5]) == jsonl.KindObject {
			_ = jsonl.Members(f[5], func(m *jsonl.Member) bool {
				chars += jsLen(m.Value)
				return true
			})
		}
		if truthy(f[6]) {
			chars += stringifyLen(f[6])
		}
	case "user", "custom", "toolResult":
		chars = contentChars(f[1])
	case "assistant":
		eachElem(f[1], func(b []byte) {
			bf := fields(b, "type", "text", "thinking", "name", "arguments")
			switch t, _ := jsonl.String(bf[0]); t {
			case "text":
				chars += jsLen(bf[1])
			case "thinking":
				chars += jsLen(bf[2])
			case "toolCall":
				chars += jsLen(bf[3]) + stringifyLen(bf[4])
			}
		})
	case "bashExecution":
		chars = jsLen(f[2]) + jsLen(f[3])
	case "branchSummary", "compactionSummary":
		chars = jsLen(f[4])
	}
	return (chars + 3) / 4
}

// contentChars is pi's estimateTextAndImageContentChars: the length of a
// string content, or of its text blocks plus 4800 per image block.
func contentChars(content []byte) int {
	if jsonl.KindOf(content) == jsonl.KindString {
		return jsLen(content)
	}
	chars := 0
	eachElem(content, func(b []byte) {
		bf := fields(b, "type", "text")
		switch t, _ := jsonl.String(bf[0]); t {
		case "text":
			chars += jsLen(bf[1])
		case "image":
			chars += 4800
		}
	})
	return chars
}

// stringify returns JSON.stringify of a raw JSON value: compact, keys in
// JavaScript property order, nothing HTML-escaped. An absent value gives
// "" (undefined in JavaScript).
func stringify(v []byte) string {
	if v == nil {
		return ""
	}
	out, err := jsonl.Canonical(nil, v)
	if err != nil {
		return string(v)
	}
	return string(out)
}

// stringifyLen is the UTF-16 length of JSON.stringify(v).
func stringifyLen(v []byte) int { return UTF16Len(stringify(v)) }

// jsNumber converts a raw JSON value the way JavaScript's + does for the
// values a usage object holds: numbers are themselves, null is 0, booleans
// 0 or 1, and an absent member (undefined) or anything else is NaN.
func jsNumber(v []byte) float64 {
	switch jsonl.KindOf(v) {
	case jsonl.KindNumber:
		f, _ := jsonl.Number(v)
		return f
	case jsonl.KindNull:
		return 0
	case jsonl.KindBool:
		if v[0] == 't' {
			return 1
		}
		return 0
	}
	return math.NaN()
}

// CalculateContextTokens is pi's calculateContextTokens(usage):
// usage.totalTokens when it is truthy, otherwise input + output +
// cacheRead + cacheWrite. A missing component makes the sum NaN, as in
// JavaScript; NaN never triggers a compaction and is written as null.
func CalculateContextTokens(usage []byte) float64 {
	f := fields(usage, "totalTokens", "input", "output", "cacheRead", "cacheWrite")
	if truthy(f[0]) && jsonl.KindOf(f[0]) == jsonl.KindNumber {
		return jsNumber(f[0])
	}
	if truthy(f[0]) {
		return math.NaN()
	}
	return jsNumber(f[1]) + jsNumber(f[2]) + jsNumber(f[3]) + jsNumber(f[4])
}

// AssistantUsage returns the usage object of msg when it is valid: the
// role is assistant, the message has a truthy usage whose
// CalculateContextTokens is above 0 (pi 1.x: an all-zero or NaN usage is
// no usage), and its stopReason is neither "aborted" nor "error".
func AssistantUsage(msg []byte) ([]byte, bool) {
	f := fields(msg, "role", "usage", "stopReason")
	if role, _ := jsonl.String(f[0]); role != "assistant" || f[1] == nil {
		return nil, false
	}
	if sr, ok := jsonl.String(f[2]); ok && (sr == "aborted" || sr == "error") {
		return nil, false
	}
	if !truthy(f[1]) || !(CalculateContextTokens(f[1]) > 0) {
		return nil, false
	}
	return f[1], true
}

// ContextEstimate is the result of EstimateContextTokens.
type ContextEstimate struct {
	// Tokens is UsageTokens + TrailingTokens.
	Tokens float64
	// UsageTokens is CalculateContextTokens of the last valid usage, or 0.
	UsageTokens float64
	// TrailingTokens is the estimate of the messages after that usage (of
	// all messages when there is none).
	TrailingTokens float64
	// LastUsageIndex is the index of the message whose usage was used, or
	// -1 (pi's null) when no message has a valid usage.
	LastUsageIndex int
}

// EstimateContextTokens is pi's estimateContextTokens: the provider's
// count at the last message with a valid usage (AssistantUsage) plus the
// estimates of the messages after it, or the sum of all estimates when no
// message reports usage.
func EstimateContextTokens(msgs []Message) ContextEstimate {
	last := -1
	var usage []byte
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := AssistantUsage(msgs[i].Raw); ok {
			last, usage = i, u
			break
		}
	}
	if last < 0 {
		est := 0
		for _, m := range msgs {
			est += EstimateTokens(m.Raw)
		}
		return ContextEstimate{Tokens: float64(est), TrailingTokens: float64(est), LastUsageIndex: -1}
	}
	u := CalculateContextTokens(usage)
	trailing := 0
	for _, m := range msgs[last+1:] {
		trailing += EstimateTokens(m.Raw)
	}
	return ContextEstimate{Tokens: u + float64(trailing), UsageTokens: u, TrailingTokens: float64(trailing), LastUsageIndex: last}
}

// ShouldCompact is pi's shouldCompact: s.Enabled and contextTokens >
// contextWindow - s.ReserveTokens. A context window of 0 (a model without
// one) makes any positive count trigger; NaN never does.
func ShouldCompact(contextTokens, contextWindow float64, s Settings) bool {
	if !s.Enabled {
		return false
	}
	return contextTokens > contextWindow-float64(s.ReserveTokens)
}
