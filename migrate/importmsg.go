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
	"github.com/sessctl/sessctl/message"
)

// The helpers below build pi's message payloads (pi-format.md section 6)
// for the importers, as bytes: package message knows the shape and key
// order of each, and encodes them.

// encode returns the bytes of a value of package message. Its values
// built here always encode (strings, numbers, canonical JSON), so an
// error is a bug in this file.
func encode(v interface{ MarshalJSON() ([]byte, error) }) []byte {
	b, err := v.MarshalJSON()
	if err != nil {
		panic(fmt.Sprintf("migrate: encode %T: %v", v, err))
	}
	return b
}

// TextBlock returns {"type":"text","text":text}.
func TextBlock(text string) []byte { return encode(message.NewText(text)) }

// ThinkingBlock returns {"type":"thinking","thinking",
// "thinkingSignature"?,"redacted"?}; an empty signature is left out.
func ThinkingBlock(text, signature string, redacted bool) []byte {
	return encode(&message.ThinkingContent{Thinking: text, ThinkingSignature: signature, Redacted: redacted})
}

// ToolCallBlock returns {"type":"toolCall","id","name","arguments"};
// args must be a JSON object (see ObjectArgs; what is not JSON becomes
// {}).
func ToolCallBlock(id, name string, args []byte) []byte {
	if !json.Valid(args) {
		args = ObjectArgs(args)
	}
	return encode(message.NewToolCall(id, name, json.RawMessage(args)))
}

// ImageBlock returns {"type":"image","data","mimeType"}.
func ImageBlock(data, mimeType string) []byte { return encode(message.NewImage(data, mimeType)) }

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

// blocks decodes encoded blocks for package message.
func blocks(items [][]byte) []message.Block {
	out := make([]message.Block, len(items))
	for i, it := range items {
		out[i] = message.DecodeBlock(it)
	}
	return out
}

// contentBlocks decodes an encoded array of blocks; anything else is one
// block kept as it is.
func contentBlocks(content []byte) []message.Block {
	if bs, ok := message.DecodeBlocks(content); ok {
		return bs
	}
	return []message.Block{message.DecodeBlock(content)}
}

// UserMessage returns {"role":"user","content","timestamp"}; content is a
// JSON string or an array of text/image blocks.
func UserMessage(content []byte, ms int64) []byte {
	c, ok := message.DecodeContent(content)
	if !ok {
		c = message.Blocks(contentBlocks(content)...)
	}
	return encode(&message.User{Content: c, Timestamp: ms})
}

// ToolResultMessage returns {"role":"toolResult","toolCallId","toolName",
// "content","details"?,"isError","timestamp"}; content is an array of
// text/image blocks, details nil or any JSON (bytes that are not JSON
// are written as a string).
func ToolResultMessage(callID, toolName string, content, details []byte, isError bool, ms int64) []byte {
	m := &message.ToolResult{ToolCallID: callID, ToolName: toolName, Content: contentBlocks(content), IsError: isError, Timestamp: ms}
	switch {
	case details == nil:
	case json.Valid(details):
		m.Details = json.RawMessage(details)
	default:
		m.Details = string(details)
	}
	return encode(m)
}

// Tokens returns a token count an importer read as a JSON number, as
// pi's usage holds it (message.Usage): a whole number, rounded.
func Tokens(n float64) int64 { return int64(math.Round(n)) }

// Assistant is an assistant message being assembled. Its Usage is pi's
// (message.Usage); a TotalTokens of 0 is written as the sum of the four
// counts, and a source that records only a total cost sets Cost.Total.
type Assistant struct {
	Content      [][]byte // text, thinking and toolCall blocks
	API          string
	Provider     string
	Model        string
	Usage        message.Usage
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
	u := a.Usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return encode(&message.Assistant{Content: blocks(a.Content), API: a.API, Provider: a.Provider, Model: a.Model,
		Usage: u, StopReason: message.StopReason(stop), ErrorMessage: a.ErrorMessage, Timestamp: a.Timestamp})
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
