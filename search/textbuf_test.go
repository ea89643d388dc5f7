package search

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
)

// textBufLines are entries whose texts take every path of lineDocsIn:
// escapes (a lone surrogate among them), keys written with escapes, empty
// and non-string values, interleaved text and thinking blocks.
var textBufLines = []string{
	`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"caf\u00e9 \ud83d\ude00 \ud800 line\nnext"}}`,
	`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"one"},{"type":"image","data":"x"},{"type":"text","text":""},{"type":"text","text":7},{"type":"text","text":"two"}]}}`,
	`{"type":"message","id":"c","parentId":"b","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"first"},{"type":"t\u0065xt","text":"esc\"aped"},{"type":"thinking","thinking":"again"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"/a\tb","n":3,"deep":{"x":[true,null,"y"]},"k\u0065y":"v"}},{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]}}`,
	`{"type":"message","id":"d","parentId":"c","timestamp":"2026-03-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"re\u0061d","content":[{"type":"text","text":"file body"}]}}`,
	`{"type":"message","id":"e","parentId":"d","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"bashExecution","command":"","output":"out\u0021"}}`,
	`{"type":"message","id":"f","parentId":"e","timestamp":"2026-03-01T10:00:05.000Z","message":{"role":"bashExecution","command":"make","output":null}}`,
	`{"type":"compaction","id":"g","parentId":"f","timestamp":"2026-03-01T10:00:06.000Z","summary":"sum\nmary","firstKeptEntryId":"a","tokensBefore":1}`,
	`{"type":"custom_message","id":"h","parentId":"g","timestamp":"2026-03-01T10:00:07.000Z","customType":"x","content":"custom text","display":true}`,
	`{"type":"label","id":"i","parentId":"h","timestamp":"2026-03-01T10:00:08.000Z","targetId":"a","label":"l\u0061bel"}`,
	`{"type":"session_info","id":"j","parentId":"i","timestamp":"2026-03-01T10:00:09.000Z","name":"the name"}`,
	`{"type":"message","id":"k","parentId":"j","timestamp":"2026-03-01T10:00:10.000Z","message":{"role":"system","content":"sys"}}`,
}

// TestSharedTextsAreTheTexts: a build's shared buffer gives the texts
// that copies do, line after line (each read before the next line
// reuses the buffer), for the lines above and every line of the corpus.
func TestSharedTextsAreTheTexts(t *testing.T) {
	lines := textBufLines
	for _, data := range testenv.CorpusFiles(t, testenv.Suffix(".jsonl"), "pi") {
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			lines = append(lines, string(l))
		}
	}
	tb := &textBuf{shared: true}
	var docs []doc
	n := 0
	for i, l := range lines {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			continue
		}
		want := lineDocs(&e, nil)
		tb.reset()
		docs = lineDocsIn(tb, &e, docs[:0])
		got := fmt.Sprint(docs) // read before the next line's reset
		if diff := cmp.Diff(fmt.Sprint(want), got); diff != "" {
			t.Fatalf("line %d %.80s: shared texts differ (-copied +shared):\n%s", i, l, diff)
		}
		n += len(docs)
	}
	t.Logf("%d texts of %d lines", n, len(lines))
	if n < 15 {
		t.Fatalf("only %d texts in the lines", n)
	}
}

// TestLineDocsTexts: the texts of the lines above, spelled out.
func TestLineDocsTexts(t *testing.T) {
	var got []string
	for _, l := range textBufLines {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		for _, d := range lineDocs(&e, nil) {
			got = append(got, fmt.Sprintf("%s|%s|%s", d.kind, d.tool, d.text))
		}
	}
	want := []string{
		"user||café 😀 \uFFFD line\nnext",
		"user||one\ntwo",
		"text||first\nesc\"aped",
		"thinking||hmm\nagain",
		"toolCall|read|read\npath: /a\tb\nn: 3\ndeep:\nx: true y\nkey: v",
		"toolCall|bash|bash\ncommand: ls",
		"toolResult|read|file body",
		"bash|bash|out!",
		"bash|bash|make",
		"compaction||sum\nmary",
		"custom||custom text",
		"label||label",
		"name||the name",
		"system||sys",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
}
