package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// The helpers below build pi's message payloads (pi-format.md section 6)
// with pi's key order, for the importers.

// TextBlock returns {"type":"text","text":text}.
func TextBlock(text string) []byte {
	return jsonl.NewObject(len(text)+32).String("type", "text").String("text", text).Bytes()
}

// ThinkingBlock returns {"type":"thinking","thinking",
// "thinkingSignature"?,"redacted"?}; an empty signature is left out.
func ThinkingBlock(text, signature string, redacted bool) []byte {
	b := jsonl.NewObject(len(text)+len(signature)+64).String("type", "thinking").String("thinking", text)
	if signature != "" {
		b.String("thinkingSignature", signature)
	}
	if redacted {
		b.Bool("redacted", true)
	}
	return b.Bytes()
}

// ToolCallBlock returns {"type":"toolCall","id","name","arguments"};
// args must be a JSON object (see ObjectArgs).
func ToolCallBlock(id, name string, args []byte) []byte {
	return jsonl.NewObject(len(args)+len(id)+len(name)+64).String("type", "toolCall").
		String("id", id).String("name", name).Raw("arguments", args).Bytes()
}

// ImageBlock returns {"type":"image","data","mimeType"}.
func ImageBlock(data, mimeType string) []byte {
	return jsonl.NewObject(len(data)+64).String("type", "image").String("data", data).String("mimeType", mimeType).Bytes()
}

// Array returns the JSON array of the given encoded values.
func Array(items [][]byte) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}

// TextContent returns [{"type":"text","text":text}].
func TextContent(text string) []byte { return Array([][]byte{TextBlock(text)}) }

// UserMessage returns {"role":"user","content","timestamp"}; content is a
// JSON string or an array of text/image blocks.
func UserMessage(content []byte, ms int64) []byte {
	return jsonl.NewObject(len(content)+64).String("role", "user").Raw("content", content).
		Number("timestamp", float64(ms)).Bytes()
}

// ToolResultMessage returns {"role":"toolResult","toolCallId","toolName",
// "content","details"?,"isError","timestamp"}; content is an array of
// text/image blocks, details nil or any JSON.
func ToolResultMessage(callID, toolName string, content, details []byte, isError bool, ms int64) []byte {
	b := jsonl.NewObject(len(content)+len(details)+128).String("role", "toolResult").
		String("toolCallId", callID).String("toolName", toolName).Raw("content", content)
	if details != nil {
		b.Raw("details", details)
	}
	return b.Bool("isError", isError).Number("timestamp", float64(ms)).Bytes()
}

// Usage is an assistant message's token usage. TotalTokens 0 means the
// sum of the four counts. Cost is the total cost when the source records
// one; the per-kind costs are written as 0.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, TotalTokens float64
	Cost                                              float64
}

// JSON returns pi's usage object.
func (u Usage) JSON() []byte {
	total := u.TotalTokens
	if total == 0 {
		total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	cost := jsonl.NewObject(96).Number("input", 0).Number("output", 0).Number("cacheRead", 0).
		Number("cacheWrite", 0).Number("total", u.Cost).Bytes()
	return jsonl.NewObject(160).Number("input", u.Input).Number("output", u.Output).
		Number("cacheRead", u.CacheRead).Number("cacheWrite", u.CacheWrite).
		Number("totalTokens", total).Raw("cost", cost).Bytes()
}

// Assistant is an assistant message being assembled.
type Assistant struct {
	Content      [][]byte // text, thinking and toolCall blocks
	API          string
	Provider     string
	Model        string
	Usage        Usage
	StopReason   string // "" means toolUse when Content has a tool call, else stop
	ErrorMessage string // written when not ""
	Timestamp    int64  // epoch ms
}

// HasToolCall reports whether the content holds a toolCall block.
func (a *Assistant) HasToolCall() bool {
	for _, c := range a.Content {
		if t, _ := jsonl.Lookup(c, "type"); string(t) == `"toolCall"` {
			return true
		}
	}
	return false
}

// JSON returns pi's assistant message: {"role","content","api","provider",
// "model","usage","stopReason","errorMessage"?,"timestamp"}.
func (a *Assistant) JSON() []byte {
	stop := a.StopReason
	if stop == "" {
		stop = "stop"
		if a.HasToolCall() {
			stop = "toolUse"
		}
	}
	content := Array(a.Content)
	b := jsonl.NewObject(len(content)+320).String("role", "assistant").Raw("content", content).
		String("api", a.API).String("provider", a.Provider).String("model", a.Model).
		Raw("usage", a.Usage.JSON()).String("stopReason", stop)
	if a.ErrorMessage != "" {
		b.String("errorMessage", a.ErrorMessage)
	}
	return b.Number("timestamp", float64(a.Timestamp)).Bytes()
}

// ObjectArgs returns tool-call arguments as a JSON object: an object as
// it is, a string holding a JSON object parsed, anything else (or
// nothing) wrapped as {"input": value}.
func ObjectArgs(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	switch jsonl.KindOf(raw) {
	case jsonl.KindObject:
		if out, err := jsonl.Canonical(nil, raw); err == nil {
			return out
		}
	case jsonl.KindString:
		s, _ := jsonl.String(raw)
		t := bytes.TrimSpace([]byte(s))
		if jsonl.KindOf(t) == jsonl.KindObject {
			if out, err := jsonl.Canonical(nil, t); err == nil {
				return out
			}
		}
	case jsonl.KindAbsent, jsonl.KindNull:
		return []byte("{}")
	}
	if out, err := jsonl.Canonical(nil, raw); err == nil {
		return jsonl.NewObject(len(out)+16).Raw("input", out).Bytes()
	}
	return []byte("{}")
}

// JSONText returns raw as text for a content block: a JSON string's value,
// anything else as its compact JSON.
func JSONText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if s, ok := jsonl.String(raw); ok {
		return s
	}
	if len(raw) == 0 {
		return ""
	}
	if out, err := jsonl.Canonical(nil, raw); err == nil {
		return string(out)
	}
	return string(raw)
}

// Millis returns t as epoch milliseconds.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// ParseTime parses a source timestamp the way JavaScript's Date.parse
// does (ISO 8601 with any fraction, RFC 3339 with nanoseconds and
// offsets), and epoch milliseconds given as a JSON number.
func ParseTime(raw []byte) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	switch jsonl.KindOf(raw) {
	case jsonl.KindString:
		s, _ := jsonl.String(raw)
		return ParseTimeString(s)
	case jsonl.KindNumber:
		f, ok := jsonl.Number(raw)
		if !ok || math.IsNaN(f) || math.Abs(f) > 8.64e15 {
			return time.Time{}, false
		}
		return time.UnixMilli(int64(f)).UTC(), true
	}
	return time.Time{}, false
}

// ParseTimeString parses a timestamp string (see ParseTime).
func ParseTimeString(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	if ms, ok := jsonl.ParseDate(s); ok {
		return time.UnixMilli(int64(ms)).UTC(), true
	}
	return time.Time{}, false
}

// DefaultMaxLine is the longest source line an importer reads when
// ImportOptions.MaxLine is 0: 64 MiB, far above any line an agent writes
// (an image or a large tool output), far below what a compressed file
// crafted to expand to one endless line would make it hold.
const DefaultMaxLine = 64 << 20

// ErrLineTooLong is matched by the error EachLine passes for a line
// longer than its bound.
var ErrLineTooLong = errors.New("line too long")

// EachLine calls fn with every line of r that is not blank, with its
// 1-based number and without its line ending. fn returns false to stop.
// A line longer than max bytes, its ending included (DefaultMaxLine when
// max <= 0), is not
// held: its bytes are skipped up to the next newline and fn is called
// with a nil line and an error matching ErrLineTooLong, which importers
// report as damage at that line. Memory grows only up to the bound,
// whatever the size of r.
func EachLine(r io.Reader, max int, fn func(n int, line []byte, err error) bool) error {
	if max <= 0 {
		max = DefaultMaxLine
	}
	br := bufio.NewReaderSize(r, 256<<10)
	n := 0
	for {
		line, long, err := readLineMax(br, max)
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case long > 0:
			n++
			if !fn(n, nil, fmt.Errorf("%w: %d bytes, more than the %d an import reads", ErrLineTooLong, long, max)) {
				return nil
			}
		case len(line) > 0:
			n++
			body := bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(body)) > 0 && !fn(n, body, nil) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLineMax reads one line including its '\n' (without one at EOF),
// unless it is longer than max bytes (its line ending included): then it
// skips to the end of the line and returns a nil line and the line's
// length. It holds at most max bytes of a line.
func readLineMax(br *bufio.Reader, max int) ([]byte, int64, error) {
	var buf []byte
	var size int64
	for {
		part, err := br.ReadSlice('\n')
		size += int64(len(part))
		if size <= int64(max) {
			buf = append(buf, part...)
		} else {
			buf = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if size > int64(max) {
			return nil, size, err
		}
		return buf, 0, err
	}
}

// DecodeLine unmarshals one JSON object line into v and reports an error
// naming what is wrong when the line is not a JSON object, or is not
// valid UTF-8 (see CheckUTF8): such a line is damaged source data, to be
// reported and skipped, never imported with its bytes replaced.
func DecodeLine(line []byte, v any) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return errNotObject
	}
	return DecodeJSON(line, v)
}

// DecodeJSON unmarshals a JSON value read from a source (a file, a row, a
// message of a document) into v, refusing data that is not valid UTF-8
// (see CheckUTF8). Importers decode every unit they report as damaged
// when it does not decode through it.
func DecodeJSON(data []byte, v any) error {
	if err := CheckUTF8(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// ErrInvalidUTF8 is matched by the error of CheckUTF8.
var ErrInvalidUTF8 = errors.New("not valid UTF-8")

// CheckUTF8 returns an error naming the offset of the first byte of data
// that is not part of valid UTF-8 (matching ErrInvalidUTF8), nil when
// data is valid. encoding/json would read such bytes as U+FFFD, changing
// the text without a word; importers report them as damage instead.
func CheckUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("byte %d (0x%02x) is %w; it would be read as U+FFFD", i, data[i], ErrInvalidUTF8)
		}
		i += n
	}
	return nil
}

var errNotObject = jsonError("not a JSON object")

type jsonError string

func (e jsonError) Error() string { return string(e) }
