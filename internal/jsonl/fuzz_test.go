package jsonl_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
)

// Fixture lines: every entry type, escapes, unknown members, duplicate
// keys, non-string ids, numbers in every notation, broken JSON.
var fuzzLines = []string{
	`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/w"}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"hi <b>&amp;</b>\u2028","timestamp":1}}`,
	`{"type":"compaction","id":"c1","parentId":"a1","timestamp":"t","summary":"s","firstKeptEntryId":"a1","tokensBefore":1e3,"details":{"x":[1.0,-0,0.5e-7,123456789012345678901234567890]}}`,
	`{"type":"label","id":"l","parentId":"c1","targetId":"a1","label":"\ud83d\ude00 \udc00 lone"}`,
	`{"id":1,"parentId":2.5,"type":["x"],"id":"dup","2":"b","1":"a","__proto__":{}}`,
	` {"type":"custom","customType":"x","data":{"nested":{"deep":[[[[]]]]}},"id":"\u0041\"\\/\b\f\n\r\t"} ` + "\r",
	`{"type":"message","id":"x","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("é", 40) + `"}]}}`,
	"{\"bad utf8\":\"\xff\xfe\",\"id\":\"\xc3\"}",
	`{"type":"message","id":"a1"`,
	`{"a":1}}`,
	`[1,2,3]`,
	`"just a string"`,
	`null`,
	`{"a":tru}`,
	`{"a":01}`,
	`{"a":"\x"}`,
	"{\"a\":\"ctl\x01\"}",
	`{}`,
	``,
	`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"text":"b","type":"te\u0078t"},{"type":"image"},null,[1],{"type":"text"},{"type":"text","text":1,"text":"c"}],"timestamp":5,"content":"x"}}`,
	`{"type":"message","message":{"content":[{"type":"text","text":"a"}]},"message":{"role":"assistant","content":[ {"type":"text" , "text" : "b" } , {"type":"thinking","thinking":"t"} ]}}`,
}

// FuzzParseEntry checks the line decoder: it never panics; it accepts a
// line exactly when encoding/json (and JSON.parse) finds one valid object;
// decoding the canonical form gives the same envelope; and the canonical
// form is a fixed point.
func FuzzParseEntry(f *testing.F) {
	for _, l := range fuzzLines {
		f.Add([]byte(l))
	}
	for _, data := range testenv.CorpusFiles(f, testenv.Suffix(".jsonl"), "pi", "cases") {
		for _, l := range bytes.Split(data, []byte{'\n'}) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := jsonl.ParseEntry(line)
		valid := jsonl.Valid(line)
		// encoding/json stops at 10000 levels of nesting; JSON.parse and
		// jsonl have no such limit.
		if depth(line) <= 10000 {
			if want := json.Valid(line); valid != want {
				t.Fatalf("Valid = %v, encoding/json.Valid = %v for %q", valid, want, line)
			}
		}
		trimmed := bytes.Trim(line, " \t\r\n")
		isObject := valid && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != isObject {
			t.Fatalf("ParseEntry error %v, but the line is an object: %v (%q)", err, isObject, line)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(e.Raw, trimmed) {
			t.Fatalf("Raw = %q, want the line without surrounding whitespace %q", e.Raw, trimmed)
		}
		checkMessageMembers(t, &e)
		c1, err := jsonl.Canonical(nil, e.Raw)
		if err != nil {
			t.Fatalf("Canonical of a parsed line: %v (%q)", err, e.Raw)
		}
		e2, err := jsonl.ParseEntry(c1)
		if err != nil {
			t.Fatalf("the canonical form does not parse: %v\nline %q\ncanonical %q", err, line, c1)
		}
		if a, b := envelope(t, &e), envelope(t, &e2); a != b {
			t.Fatalf("decode -> canonical -> decode changed the envelope\nline      %q\ncanonical %q\nbefore %s\nafter  %s", line, c1, a, b)
		}
		c2, err := jsonl.Canonical(nil, c1)
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("Canonical is not a fixed point: %q -> %q (%v)", c1, c2, err)
		}
		if !jsonl.IsCanonical(c1) {
			t.Fatalf("IsCanonical(%q) = false", c1)
		}
		if !json.Valid(c1) && depth(c1) <= 10000 {
			t.Fatalf("canonical form is not valid JSON: %q", c1)
		}
	})
}

// checkMessageMembers compares what EachEntry reports of a line's message
// (found while validating) with a second walk over the parsed entry using
// the general Members and Elements.
func checkMessageMembers(t *testing.T, e *jsonl.Entry) {
	t.Helper()
	var want jsonl.MessageMembers
	lastMember := func(obj []byte, keys ...string) map[string][]byte {
		out := map[string][]byte{}
		_ = jsonl.Members(obj, func(m *jsonl.Member) bool {
			for _, k := range keys {
				if m.KeyString() == k {
					out[k] = m.Value
				}
			}
			return true
		})
		return out
	}
	if msg := e.Message(); msg != nil {
		top := lastMember(msg, "content", "timestamp")
		want.Content, want.Timestamp = top["content"], top["timestamp"]
		if jsonl.KindOf(want.Content) == jsonl.KindArray {
			_ = jsonl.Elements(want.Content, func(v []byte) bool {
				if jsonl.KindOf(v) == jsonl.KindObject {
					blk := lastMember(v, "type", "text")
					if s, ok := jsonl.String(blk["type"]); ok && s == "text" {
						want.Texts = append(want.Texts, blk["text"])
					}
				}
				return true
			})
		}
	}
	method := e.MessageMembers()
	if len(method.Texts) == 0 {
		method.Texts = nil
	}
	if diff := cmp.Diff(want, method); diff != "" {
		t.Fatalf("Entry.MessageMembers differs (-walk +method):\n%s", diff)
	}
	if bytes.IndexByte(e.Raw, '\n') >= 0 {
		return // whitespace between tokens: EachEntry sees several lines
	}
	var got jsonl.MessageMembers
	n := 0
	jsonl.EachEntry(append([]byte(nil), e.Raw...), func(_ *jsonl.Entry, m *jsonl.MessageMembers) bool {
		n++
		got = jsonl.MessageMembers{Content: m.Content, Timestamp: m.Timestamp, Texts: append([][]byte(nil), m.Texts...)}
		return true
	})
	if n != 1 {
		t.Fatalf("EachEntry saw %d entries in one object line %q", n, e.Raw)
	}
	if len(got.Texts) == 0 {
		got.Texts = nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("EachEntry's message members differ (-walk +EachEntry) for %q:\n%s", e.Raw, diff)
	}
}

// envelope describes the decoded envelope, with strings as Canonical
// writes them (invalid UTF-8 bytes become U+FFFD) and non-string ids in
// canonical notation.
func envelope(t *testing.T, e *jsonl.Entry) string {
	key := func(s string, k jsonl.Kind) string {
		switch k {
		case jsonl.KindAbsent, jsonl.KindNull:
			return ""
		case jsonl.KindString:
			return validUTF8(s)
		}
		c, err := jsonl.Canonical(nil, []byte(jsonl.KeyString(s)))
		if err != nil {
			t.Fatalf("non-string id %q: %v", s, err)
		}
		return string(c)
	}
	return strings.Join([]string{
		validUTF8(e.Type), key(e.ID, e.IDKind), string(rune('0' + e.IDKind)),
		key(e.ParentID, e.ParentKind), string(rune('0' + e.ParentKind)), validUTF8(e.Timestamp),
	}, "|")
}

// validUTF8 returns s as JavaScript reads its bytes: each invalid
// sequence (a maximal subpart, checked against Node in codec_test.go)
// becomes U+FFFD, as this package's encoder writes it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out, ok := jsonl.String(jsonl.AppendString(nil, s))
	if !ok {
		panic("AppendString wrote an invalid JSON string")
	}
	return out
}

// depth returns the deepest nesting of brackets outside strings.
func depth(b []byte) int {
	d, maxD, in := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			maxD = max(maxD, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return maxD
}

// Fixture files: torn and unterminated tails, CRLF, a byte order mark,
// blank and whitespace-only lines, JavaScript whitespace, garbage in the
// middle.
var fuzzFiles = []string{
	"",
	"\n\n",
	fuzzLines[0] + "\n" + fuzzLines[1] + "\n",
	fuzzLines[0] + "\n" + fuzzLines[1],
	fuzzLines[0] + "\n" + `{"type":"message","id":"a1","par`,
	"\uFEFF" + fuzzLines[0] + "\r\n" + fuzzLines[1] + "\r\n",
	"  \n\t\n" + fuzzLines[0] + "\n\n  \n" + fuzzLines[2] + "\n \u00a0\u2028",
	fuzzLines[0] + "\ngarbage\n[1]\nnull\n" + fuzzLines[3] + "\n   ",
	fuzzLines[0] + "\n" + `{"type":"custom","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000\u005a"}` + "\n",
	"\u2029" + fuzzLines[0] + "\u00a0\n" + fuzzLines[4] + "\n\u3000",
}

// FuzzParseFile checks the file loader: any bytes give entries and
// malformed lines with line numbers and offsets that point at them, and
// a tail state that agrees with the bytes; it never panics or hangs.
func FuzzParseFile(f *testing.F) {
	for _, s := range fuzzFiles {
		f.Add([]byte(s))
	}
	for _, data := range testenv.CorpusFiles(f, testenv.Suffix(".jsonl"), "pi", "cases") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := jsonl.ParseFile(data)
		if p.Size != int64(len(data)) {
			t.Fatalf("Size %d, want %d", p.Size, len(data))
		}
		lines := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if p.Lines != lines {
			t.Fatalf("Lines %d, want %d", p.Lines, lines)
		}
		// lineAt returns the 1-based line holding offset off and that
		// line's bounds.
		lineAt := func(off int64) (int, int64, int64) {
			start := int64(bytes.LastIndexByte(data[:off], '\n') + 1)
			end := int64(len(data))
			if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
				end = off + int64(i)
			}
			return 1 + bytes.Count(data[:off], []byte{'\n'}), start, end
		}
		used := map[int]string{}
		prev := 0
		for i, e := range p.Entries {
			if e.Offset < 0 || e.Offset >= p.Size || e.Line < 1 || e.Line > p.Lines {
				t.Fatalf("entry %d: line %d, offset %d out of range (%d lines, %d bytes)", i, e.Line, e.Offset, p.Lines, p.Size)
			}
			line, start, end := lineAt(e.Offset)
			if line != e.Line {
				t.Fatalf("entry %d: Line %d, but offset %d is on line %d", i, e.Line, e.Offset, line)
			}
			if !bytes.Contains(data[start:end], e.Raw) {
				t.Fatalf("entry %d: Raw %q is not on its line %q", i, e.Raw, data[start:end])
			}
			if e.Line <= prev {
				t.Fatalf("entry %d: line %d after line %d", i, e.Line, prev)
			}
			prev = e.Line
			used[e.Line] = "entry"
			again, err := jsonl.ParseEntry(e.Raw)
			if err != nil || again.ID != e.ID || again.Type != e.Type || again.ParentID != e.ParentID ||
				again.Timestamp != e.Timestamp || again.Role != e.Role {
				t.Fatalf("entry %d does not decode to itself: %v", i, err)
			}
		}
		for i, b := range p.Malformed {
			if b.Offset < 0 || b.Offset >= p.Size || b.Line < 1 || b.Line > p.Lines {
				t.Fatalf("malformed %d: line %d, offset %d out of range", i, b.Line, b.Offset)
			}
			// Bytes stops short of the line's end only by the whitespace
			// trimmed off the end of the file.
			line, _, end := lineAt(b.Offset)
			stop := b.Offset + int64(b.Bytes)
			if line != b.Line || stop > end || strings.TrimFunc(string(data[stop:end]), jsonl.IsJSWhitespace) != "" {
				t.Fatalf("malformed %d: line %d offset %d bytes %d, but that is line %d ending at %d", i, b.Line, b.Offset, b.Bytes, line, end)
			}
			if used[b.Line] != "" {
				t.Fatalf("line %d is both an entry and malformed", b.Line)
			}
			used[b.Line] = "malformed"
			if b.Err == nil {
				t.Fatalf("malformed %d has no error", i)
			}
		}
		last := int64(bytes.LastIndexByte(data, '\n') + 1)
		switch p.Tail {
		case jsonl.TailClean:
			if last != p.Size {
				t.Fatalf("TailClean, but %d bytes follow the last newline", p.Size-last)
			}
		case jsonl.TailNoNewline:
			if n := len(p.Entries); n == 0 || p.Entries[n-1].Offset < last || p.TailOffset != last {
				t.Fatalf("TailNoNewline without an entry on the unterminated line")
			}
		case jsonl.TailTorn:
			if p.TailOffset != last || last == p.Size {
				t.Fatalf("TailTorn at %d, last line starts at %d of %d", p.TailOffset, last, p.Size)
			}
			if used[p.Lines] != "" {
				t.Fatalf("the torn last line is also %s", used[p.Lines])
			}
		case jsonl.TailWhitespace:
			if p.TailOffset != last || last == p.Size || used[p.Lines] != "" {
				t.Fatalf("TailWhitespace at %d, but the last line is %q", p.TailOffset, used[p.Lines])
			}
		default:
			t.Fatalf("unknown tail %d", p.Tail)
		}
	})
}
