package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
)

// parsedView is what a parse says about a file, in comparable form.
type parsedView struct {
	Entries    []entryView
	Malformed  []string
	Lines      int
	Tail       jsonl.Tail
	TailOffset int64
	Size       int64
}

type entryView struct {
	Raw, Type, ID, ParentID, Timestamp, Role, Message string
	IDKind, ParentKind                                jsonl.Kind
	HasMessage                                        bool
	Offset                                            int64
	Line                                              int
}

func viewOf(p *jsonl.Parsed) parsedView {
	v := parsedView{Lines: p.Lines, Tail: p.Tail, TailOffset: p.TailOffset, Size: p.Size}
	for i := range p.Entries {
		e := &p.Entries[i]
		v.Entries = append(v.Entries, entryView{Raw: string(e.Raw), Type: e.Type, ID: e.ID, ParentID: e.ParentID,
			Timestamp: e.Timestamp, Role: e.Role, Message: string(e.Message()), IDKind: e.IDKind,
			ParentKind: e.ParentKind, HasMessage: e.HasMessage(), Offset: e.Offset, Line: e.Line})
	}
	for _, b := range p.Malformed {
		v.Malformed = append(v.Malformed, fmt.Sprintf("line %d offset %d bytes %d: %v", b.Line, b.Offset, b.Bytes, b.Err))
	}
	return v
}

// streamFiles are whole files whose parse depends on where they start and
// end: JavaScript's trim of the whole text (a byte-order mark, a
// no-break space after the last object), blank lines, CRLF, torn and
// unterminated last lines, long lines.
var streamFiles = []string{
	"",
	"\n\n",
	" \u00a0\n\ufeff",
	"\ufeff{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\"}}\n",
	"{\"type\":\"session\",\"id\":\"s\"}\n{\"id\":\"a\"}\u00a0\n\n \n",
	"{\"type\":\"session\",\"id\":\"s\"}\n{\"id\":\"a\"}\u00a0\n{\"id\":\"b\"}\n",
	"{\"type\":\"session\",\"id\":\"s\"}\r\n{\"id\":\"a\"} \r\n\r\n",
	"{\"type\":\"session\",\"id\":\"s\"}\n{\"id\":\"a\"}",
	"{\"type\":\"session\",\"id\":\"s\"}\n{\"id\":\"a\",\"mess",
	"{\"type\":\"session\",\"id\":\"s\"}\nnot json\n[1]\n{\"id\":\"a\"}\n\u2028\n",
	"\n\n\u3000\n{\"type\":\"session\",\"id\":\"s\"}\n" + strings.Repeat(`{"type":"message","id":"m","parentId":"s","message":{"role":"assistant","content":"`+strings.Repeat("x", 300)+`"}}`+"\n", 20),
	"{\"a\":1}\n\u00a0",
	"{\"a\":1}\n\u00a0{\"b\":2}",
	"{\"a\":1}\u2029",
	// The last object, then more blank text than a piece holds.
	"{\"type\":\"session\",\"id\":\"s\"}\n{\"id\":\"a\"}\u00a0\n" + strings.Repeat(" \n\n\u3000", 50),
	strings.Repeat("\n \ufeff", 50) + "{\"type\":\"session\",\"id\":\"s\"}\n",
}

// statReader is a reader that tells a size, right or wrong, by Stat, as
// a file does: ParseReader makes room for the entries it expects from
// it.
type statReader struct {
	io.Reader
	size int64
}

func (r statReader) Stat() (fs.FileInfo, error) { return sizeInfo(r.size), nil }

// sizeInfo is the FileInfo of a regular file of its size.
type sizeInfo int64

func (s sizeInfo) Name() string       { return "f" }
func (s sizeInfo) Size() int64        { return int64(s) }
func (s sizeInfo) Mode() fs.FileMode  { return 0o600 }
func (s sizeInfo) ModTime() time.Time { return time.Time{} }
func (s sizeInfo) IsDir() bool        { return false }
func (s sizeInfo) Sys() any           { return nil }

// readerKind is how parseStream hands data to ParseReader.
type readerKind int

const (
	plainReader readerKind = iota
	oneByteReader
	sizedReader    // a reader with Stat, telling data's size
	wrongSizeSmall // telling a size far too small
	wrongSizeLarge // telling a size far too large
)

// parseStream runs ParseReader over data with a reader of the kind
// asked for.
func parseStream(t *testing.T, data []byte, chunk int, kind readerKind, keep func(*jsonl.Entry) bool) *jsonl.Parsed {
	t.Helper()
	var r io.Reader = bytes.NewReader(data)
	switch kind {
	case oneByteReader:
		r = iotest.OneByteReader(r)
	case sizedReader:
		r = statReader{r, int64(len(data))}
	case wrongSizeSmall:
		r = statReader{r, 1}
	case wrongSizeLarge:
		r = statReader{r, 10*int64(len(data)) + 1000}
	}
	p, err := jsonl.ParseReader(r, chunk, keep)
	if err != nil {
		t.Fatalf("ParseReader: %v", err)
	}
	return p
}

// checkStream checks that ParseReader gives ParseFile's result for data,
// with entries kept, and with every entry detached and filled again from
// data.
func checkStream(t *testing.T, data []byte, chunk int, kind readerKind) {
	t.Helper()
	want := viewOf(jsonl.ParseFile(data))
	got := parseStream(t, data, chunk, kind, nil)
	if diff := cmp.Diff(want, viewOf(got)); diff != "" {
		t.Fatalf("chunk %d: ParseReader differs from ParseFile (-want +got):\n%s", chunk, diff)
	}
	det := parseStream(t, data, chunk, kind, func(*jsonl.Entry) bool { return false })
	for i := range det.Entries {
		e := &det.Entries[i]
		off, n := e.Span()
		// Lines with blank text around their object stay attached.
		line := data[off : off+int64(n)]
		plain := len(line) > 0 && line[0] == '{' && line[len(line)-1] == '}'
		if e.Detached() != plain || (e.Raw == nil) != plain {
			t.Fatalf("chunk %d: entry %d (line %d %q): Detached %v", chunk, i, e.Line, line, e.Detached())
		}
		if !plain {
			continue
		}
		if err := e.Fill(data[off : off+int64(n)]); err != nil {
			t.Fatalf("chunk %d: Fill of entry %d: %v", chunk, i, err)
		}
	}
	if diff := cmp.Diff(want, viewOf(det)); diff != "" {
		t.Fatalf("chunk %d: detached and filled entries differ from ParseFile (-want +got):\n%s", chunk, diff)
	}
}

func TestParseReaderMatchesParseFile(t *testing.T) {
	t.Parallel()
	files := append([]string{}, streamFiles...)
	for _, l := range fuzzLines {
		files = append(files, l, l+"\n", "\n"+l+"\n"+l)
	}
	files = append(files, strings.Join(fuzzLines, "\n"), strings.Join(fuzzLines, "\r\n")+"\n")
	for i, f := range files {
		for _, chunk := range []int{1, 2, 3, 5, 8, 13, 64, 4096} {
			t.Run(fmt.Sprintf("file%d/chunk%d", i, chunk), func(t *testing.T) {
				t.Parallel()
				checkStream(t, []byte(f), chunk, plainReader)
			})
		}
		t.Run(fmt.Sprintf("file%d/onebyte", i), func(t *testing.T) {
			t.Parallel()
			checkStream(t, []byte(f), 16, oneByteReader)
		})
		for _, kind := range []readerKind{sizedReader, wrongSizeSmall, wrongSizeLarge} {
			t.Run(fmt.Sprintf("file%d/sized%d", i, kind), func(t *testing.T) {
				t.Parallel()
				checkStream(t, []byte(f), 5, kind)
			})
		}
	}
}

func TestParseReaderCorpus(t *testing.T) {
	t.Parallel()
	for _, data := range testenv.CorpusFiles(t, testenv.Suffix(".jsonl"), "pi", "cases") {
		for _, chunk := range []int{7, 1000, 0} {
			checkStream(t, data, chunk, sizedReader)
		}
	}
}

func TestParseReaderLarge(t *testing.T) {
	t.Parallel()
	// Large enough that each piece is parsed on several CPUs.
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","cwd":"/w"}` + "\n")
	for i := 0; b.Len() < 12<<20; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","parentId":"m%d","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"%s"}}`+"\n", i, i-1, strings.Repeat("y", i%5000))
		if i%1000 == 0 {
			b.WriteString("garbage\n\n")
		}
	}
	for _, kind := range []readerKind{plainReader, sizedReader, wrongSizeSmall} {
		checkStream(t, []byte(b.String()), 5<<20, kind)
	}
}

func TestParseReaderKeep(t *testing.T) {
	t.Parallel()
	data := []byte(strings.Join(fuzzLines[:4], "\n") + "\n")
	p := parseStream(t, data, 9, plainReader, func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage })
	for _, e := range p.Entries {
		if got, want := e.Detached(), e.Type == jsonl.TypeMessage; got != want {
			t.Errorf("line %d (type %q): Detached %v, want %v", e.Line, e.Type, got, want)
		}
		if !e.Detached() && !bytes.Contains(data, e.Raw) {
			t.Errorf("line %d: kept bytes %q are not the file's", e.Line, e.Raw)
		}
	}
}

func TestFillRefusesOtherBytes(t *testing.T) {
	t.Parallel()
	data := []byte(`{"type":"session","id":"s"}` + "\n" + `{"type":"message","id":"a","parentId":"s","message":{"role":"user","content":"hi"}}` + "\n")
	cases := map[string]string{
		"another id":       `{"type":"message","id":"b","parentId":"s","message":{"role":"user","content":"hi"}}`,
		"another parent":   `{"type":"message","id":"a","parentId":"t","message":{"role":"user","content":"hi"}}`,
		"another role":     `{"type":"message","id":"a","parentId":"s","message":{"role":"tool","content":"hi"}}`,
		"broken":           `{"type":"message","id":"a","parentId":"s","message":{"role":"user","content":"hi"`,
		"shorter":          `{"type":"message","id":"a"}`,
		"message moved":    `{"type":"message","id":"a","parentId":"s","message" :{"role":"user","content":"h"}}`,
		"another type":     `{"type":"messagf","id":"a","parentId":"s","message":{"role":"user","content":"hi"}}`,
		"not an object":    `["type","message","id","a","parentId","s","message",{"role":"user","content":"hi"}]`,
		"another time, ts": `{"type":"message","id":"a","parentId":"s","message":{"role":"user","content":"hi"},"x":1}`,
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := parseStream(t, data, 0, plainReader, func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage })
			e := &p.Entries[1]
			if err := e.Fill([]byte(line)); !errors.Is(err, jsonl.ErrChanged) {
				t.Fatalf("Fill(%s) = %v, want ErrChanged", line, err)
			}
			if !e.Detached() {
				t.Fatal("a refused Fill attached the bytes")
			}
		})
	}
}

// errReader fails after its data.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(b, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestParseReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := jsonl.ParseReader(&errReader{data: []byte(strings.Repeat(`{"a":1}`+"\n", 100)), err: boom}, 64, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's", err)
	}
}

// FuzzParseReader checks that ParseReader, at any piece size and with
// any reader, gives
// ParseFile's result, and that detached entries fill back to it.
func FuzzParseReader(f *testing.F) {
	for _, s := range append(append([]string{}, streamFiles...), fuzzFiles...) {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		// The high bits pick the reader: plain, one byte at a time, or
		// telling a size, right or too small.
		checkStream(t, data, int(chunk%64)+1, readerKind(chunk/64))
	})
}
