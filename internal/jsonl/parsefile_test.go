package jsonl_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// checkParseFileCanonical asserts that ParseFileCanonical reads data as
// ParseFile does and says which entries are canonical.
func checkParseFileCanonical(t *testing.T, data []byte) {
	t.Helper()
	p := jsonl.ParseFile(data)
	pc, canon := jsonl.ParseFileCanonical(data)
	if p.Lines != pc.Lines || p.Tail != pc.Tail || p.TailOffset != pc.TailOffset || p.Size != pc.Size ||
		len(p.Malformed) != len(pc.Malformed) || len(p.Entries) != len(pc.Entries) || len(canon) != len(pc.Entries) {
		t.Fatalf("ParseFile: %d lines, tail %d at %d, %d malformed, %d entries; ParseFileCanonical: %d, %d at %d, %d, %d (%d flags)",
			p.Lines, p.Tail, p.TailOffset, len(p.Malformed), len(p.Entries),
			pc.Lines, pc.Tail, pc.TailOffset, len(pc.Malformed), len(pc.Entries), len(canon))
	}
	for i, b := range p.Malformed {
		if c := pc.Malformed[i]; b.Line != c.Line || b.Offset != c.Offset || b.Bytes != c.Bytes {
			t.Fatalf("malformed %d: %+v and %+v", i, b, c)
		}
	}
	for i := range p.Entries {
		a, b := &p.Entries[i], &pc.Entries[i]
		if !bytes.Equal(a.Raw, b.Raw) || a.Type != b.Type || a.ID != b.ID || a.IDKind != b.IDKind ||
			a.ParentID != b.ParentID || a.ParentKind != b.ParentKind || a.Timestamp != b.Timestamp ||
			a.Role != b.Role || !bytes.Equal(a.Message(), b.Message()) || a.Offset != b.Offset || a.Line != b.Line {
			t.Fatalf("entry %d: ParseFile %+v, ParseFileCanonical %+v", i, *a, *b)
		}
		if canon[i] != jsonl.IsCanonical(a.Raw) {
			t.Fatalf("entry %d canonical %v, IsCanonical says %v: %s", i, canon[i], !canon[i], a.Raw)
		}
	}
}

func TestParseFileCanonicalReadsAsParseFile(t *testing.T) {
	t.Parallel()
	for _, s := range fuzzFiles {
		checkParseFileCanonical(t, []byte(s))
	}
}

// A file large enough to be parsed on several CPUs: the line numbers and
// the count of lines are those of one pass, whatever the cuts.
func TestParseFileInChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	var b strings.Builder
	b.WriteString("\n \uFEFF" + fuzzLines[0] + "\n")
	for i := 0; b.Len() < 6<<20; i++ {
		b.WriteString(fuzzLines[i%len(fuzzLines)])
		switch i % 7 {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\n\n  \n")
		default:
			b.WriteString("\n")
		}
	}
	for _, end := range []string{"", `{"type":"message","id":"z","par`, "\n\u00a0", fuzzLines[1]} {
		data := []byte(b.String() + end)
		p := jsonl.ParseFile(data)
		lines := bytes.Count(data, []byte{'\n'})
		if data[len(data)-1] != '\n' {
			lines++
		}
		if p.Lines != lines {
			t.Fatalf("end %q: Lines %d, want %d", end, p.Lines, lines)
		}
		line, at := 1, int64(0)
		for _, e := range p.Entries {
			line += bytes.Count(data[at:e.Offset], []byte{'\n'})
			at = e.Offset
			if e.Line != line {
				t.Fatalf("entry at %d: line %d, want %d", e.Offset, e.Line, line)
			}
		}
		checkParseFileCanonical(t, data)
	}
}
