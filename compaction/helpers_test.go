package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// pathBuilder writes entry lines for a root-to-leaf path: ids e0, e1, ...
// each the child of the one before, with a clock one second apart. Sizes
// are in estimated tokens, so "u100" of the spec is b.user(100).
type pathBuilder struct {
	lines []string
}

func (b *pathBuilder) next() (id, parent, ts string) {
	n := len(b.lines)
	id = fmt.Sprintf("e%d", n)
	parent = "null"
	if n > 0 {
		parent = fmt.Sprintf("%q", fmt.Sprintf("e%d", n-1))
	}
	ts = fmt.Sprintf("2026-03-01T09:%02d:%02d.000Z", n/60, n%60)
	return
}

func (b *pathBuilder) add(format string, a ...any) *pathBuilder {
	b.lines = append(b.lines, fmt.Sprintf(format, a...))
	return b
}

// fill returns a text of exactly 4*tokens characters.
func fill(tokens int) string { return strings.Repeat("x", 4*tokens) }

func (b *pathBuilder) message(msg string) *pathBuilder {
	id, parent, ts := b.next()
	return b.add(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":%s}`, id, parent, ts, msg)
}

func (b *pathBuilder) user(tokens int) *pathBuilder {
	return b.message(fmt.Sprintf(`{"role":"user","content":%q,"timestamp":1}`, fill(tokens)))
}

func (b *pathBuilder) userText(text string) *pathBuilder {
	return b.message(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q}],"timestamp":1}`, text))
}

// call is a tool call of an assistant message.
type call struct{ name, path string }

func (c call) json() string {
	return fmt.Sprintf(`{"type":"toolCall","id":"c","name":%q,"arguments":{"path":%q}}`, c.name, c.path)
}

// chars is what EstimateTokens counts for the call.
func (c call) chars() int { return len(c.name) + len(fmt.Sprintf(`{"path":%q}`, c.path)) }

// asst adds an assistant message of exactly tokens estimated tokens
// (padded with a text block), whose usage reports total (0: all zeros).
func (b *pathBuilder) asst(tokens, total int, calls ...call) *pathBuilder {
	chars := 4 * tokens
	var blocks []string
	for _, c := range calls {
		chars -= c.chars()
		blocks = append(blocks, c.json())
	}
	if chars < 0 {
		panic("assistant too small for its calls")
	}
	blocks = append([]string{fmt.Sprintf(`{"type":"text","text":%q}`, strings.Repeat("y", chars))}, blocks...)
	usage := fmt.Sprintf(`{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`, total)
	return b.message(fmt.Sprintf(`{"role":"assistant","content":[%s],"api":"x","provider":"p","model":"m","usage":%s,"stopReason":"stop","timestamp":1}`,
		strings.Join(blocks, ","), usage))
}

func (b *pathBuilder) tool(tokens int) *pathBuilder {
	return b.message(fmt.Sprintf(`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":%q}],"isError":false,"timestamp":1}`, fill(tokens)))
}

func (b *pathBuilder) bash(tokens int, exclude bool) *pathBuilder {
	ex := ""
	if exclude {
		ex = `,"excludeFromContext":true`
	}
	return b.message(fmt.Sprintf(`{"role":"bashExecution","command":"ls","output":%q,"exitCode":0,"cancelled":false,"truncated":false,"timestamp":1%s}`,
		fill(tokens)[2:], ex))
}

func (b *pathBuilder) modelChange() *pathBuilder {
	id, parent, ts := b.next()
	return b.add(`{"type":"model_change","id":%q,"parentId":%s,"timestamp":%q,"provider":"p","modelId":"m2"}`, id, parent, ts)
}

func (b *pathBuilder) thinking(level string) *pathBuilder {
	id, parent, ts := b.next()
	return b.add(`{"type":"thinking_level_change","id":%q,"parentId":%s,"timestamp":%q,"thinkingLevel":%q}`, id, parent, ts, level)
}

func (b *pathBuilder) label(target string) *pathBuilder {
	id, parent, ts := b.next()
	return b.add(`{"type":"label","id":%q,"parentId":%s,"timestamp":%q,"targetId":%q,"label":"x"}`, id, parent, ts, target)
}

func (b *pathBuilder) customMessage(text string) *pathBuilder {
	id, parent, ts := b.next()
	return b.add(`{"type":"custom_message","customType":"ext","content":%q,"display":true,"id":%q,"parentId":%s,"timestamp":%q}`, text, id, parent, ts)
}

func (b *pathBuilder) branchSummary(summary, details string, fromHook bool) *pathBuilder {
	id, parent, ts := b.next()
	from := "root"
	if len(b.lines) > 0 {
		from = fmt.Sprintf("e%d", len(b.lines)-1)
	}
	d := ""
	if details != "" {
		d = `,"details":` + details
	}
	return b.add(`{"type":"branch_summary","id":%q,"parentId":%s,"timestamp":%q,"fromId":%q,"summary":%q%s,"fromHook":%t}`,
		id, parent, ts, from, summary, d, fromHook)
}

func (b *pathBuilder) compaction(summary, firstKept, details string, fromHook bool) *pathBuilder {
	id, parent, ts := b.next()
	d := ""
	if details != "" {
		d = `,"details":` + details
	}
	return b.add(`{"type":"compaction","id":%q,"parentId":%s,"timestamp":%q,"summary":%q,"firstKeptEntryId":%q,"tokensBefore":50200%s,"fromHook":%t}`,
		id, parent, ts, summary, firstKept, d, fromHook)
}

// path parses the lines.
func (b *pathBuilder) path(t *testing.T) []*jsonl.Entry {
	t.Helper()
	return parseLines(t, b.lines...)
}

func parseLines(t *testing.T, lines ...string) []*jsonl.Entry {
	t.Helper()
	out := make([]*jsonl.Entry, 0, len(lines))
	for i, l := range lines {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i, err, l)
		}
		out = append(out, &e)
	}
	return out
}

// roles lists the roles of messages, for compact comparisons.
func roles(msgs []Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, roleOf(m.Raw))
	}
	return out
}
