package compaction

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func msgs(raw ...string) []Message {
	out := make([]Message, len(raw))
	for i, r := range raw {
		out[i] = Message{Raw: []byte(r)}
	}
	return out
}

func TestSerializeConversation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 5000)
	tests := []struct {
		name string
		msgs []Message
		want string
	}{
		{
			name: "user text blocks joined without separator, images dropped",
			msgs: msgs(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}]}`),
			want: "[User]: ab",
		},
		{
			name: "assistant blocks grouped: text, tool calls; thinking left out (pi 1.x)",
			msgs: msgs(`{"role":"assistant","content":[{"type":"thinking","thinking":"t1"},{"type":"text","text":"x1"},{"type":"toolCall","id":"1","name":"bash","arguments":{"command":"ls -la","timeout":5}},{"type":"thinking","thinking":"t2"},{"type":"text","text":"x2"},{"type":"toolCall","id":"2","name":"read","arguments":{"path":"a.ts"}}]}`),
			want: "[Assistant]: x1\nx2\n\n[Assistant tool calls]: bash(command=\"ls -la\", timeout=5); read(path=\"a.ts\")",
		},
		{
			name: "a tool result with string content (pi 1.x)",
			msgs: msgs(`{"role":"toolResult","toolCallId":"1","toolName":"bash","content":"plain","isError":false}`),
			want: "[Tool result]: plain",
		},
		{
			name: "tool call values in JSON.stringify form, keys in property order",
			msgs: msgs(`{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"edit","arguments":{"path":"a<b>.ts","opts":{"z":1,"0":[1.50,true,null]},"9":"x"}}]}`),
			want: "[Assistant tool calls]: edit(9=\"x\", path=\"a<b>.ts\", opts={\"0\":[1.5,true,null],\"z\":1})",
		},
		{
			name: "long tool result truncated to 2000 units",
			msgs: msgs(`{"role":"toolResult","content":[{"type":"text","text":"` + long + `"}]}`),
			want: "[Tool result]: " + long[:2000] + "\n\n[... 3000 more characters truncated]",
		},
		{
			name: "short tool result whole",
			msgs: msgs(`{"role":"toolResult","content":[{"type":"text","text":"` + long[:1500] + `"}]}`),
			want: "[Tool result]: " + long[:1500],
		},
		{
			name: "user and assistant text never truncated",
			msgs: msgs(`{"role":"user","content":"`+long+`"}`, `{"role":"assistant","content":[{"type":"text","text":"`+long+`"}]}`),
			want: "[User]: " + long + "\n\n[Assistant]: " + long,
		},
		{
			name: "image-only tool result and empty user produce no part",
			msgs: msgs(`{"role":"toolResult","content":[{"type":"image","data":"x","mimeType":"image/png"}]}`, `{"role":"user","content":""}`, `{"role":"user","content":"hi"}`),
			want: "[User]: hi",
		},
		{
			name: "empty text block still makes an assistant part",
			msgs: msgs(`{"role":"assistant","content":[{"type":"text","text":""}]}`),
			want: "[Assistant]: ",
		},
		{
			name: "converted roles",
			msgs: ConvertToLLM(msgs(
				`{"role":"bashExecution","command":"make","output":"ok","exitCode":2,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/o"}`,
				`{"role":"bashExecution","command":"secret","output":"","exitCode":0,"excludeFromContext":true}`,
				`{"role":"bashExecution","command":"sleep","output":"","cancelled":true}`,
				`{"role":"custom","customType":"x","content":"from ext","display":true}`,
				`{"role":"branchSummary","summary":"B","fromId":"a"}`,
				`{"role":"compactionSummary","summary":"C","tokensBefore":1}`,
				`{"role":"somethingElse","content":"dropped"}`,
			)),
			want: "[User]: Ran `make`\n```\nok\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]" +
				"\n\n[User]: Ran `sleep`\n(no output)\n\n(command cancelled)" +
				"\n\n[User]: from ext" +
				"\n\n[User]: " + BranchSummaryPrefix + "B" + BranchSummarySuffix +
				"\n\n[User]: " + CompactionSummaryPrefix + "C" + CompactionSummarySuffix,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, SerializeConversation(ConvertToLLM(tc.msgs))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTruncateSurrogatePair(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a", 1999) + "😀" + "bcd"
	got := truncateForSummary(s, 2000)
	// pi keeps half the pair; sessctl cuts one unit earlier and still
	// reports pi's count (2004 - 2000).
	want := strings.Repeat("a", 1999) + "\n\n[... 4 more characters truncated]"
	if got != want {
		t.Errorf("truncateForSummary = %q", got[1990:])
	}
}

func TestConvertToLLMShapes(t *testing.T) {
	t.Parallel()
	got := ConvertToLLM(msgs(
		`{"role":"custom","customType":"x","content":"hi","display":true,"timestamp":5}`,
		`{"role":"custom","customType":"x","content":[{"type":"text","text":"a"}],"display":false,"timestamp":6}`,
		`{"role":"compactionSummary","summary":"S","tokensBefore":1,"timestamp":7}`,
	))
	var raws []string
	for _, m := range got {
		raws = append(raws, string(m.Raw))
	}
	want := []string{
		`{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":5}`,
		`{"role":"user","content":[{"type":"text","text":"a"}],"timestamp":6}`,
		`{"role":"user","content":[{"type":"text","text":"The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"}],"timestamp":7}`,
	}
	if diff := cmp.Diff(want, raws); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEntryMessage(t *testing.T) {
	t.Parallel()
	path := parseLines(t,
		`{"type":"custom_message","customType":"ext","content":"c","display":false,"details":{"k":1},"id":"a","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}`,
		`{"type":"branch_summary","id":"b","parentId":"a","timestamp":"2026-03-01T09:00:01.000Z","fromId":"a","summary":""}`,
		`{"type":"compaction","id":"c","parentId":"b","timestamp":"2026-03-01T09:00:02.000Z","summary":"S","firstKeptEntryId":"a","tokensBefore":12}`,
		`{"type":"label","id":"d","parentId":"c","timestamp":"2026-03-01T09:00:03.000Z","targetId":"a","label":"x"}`,
		`{"type":"message","id":"e","parentId":"d","timestamp":"2026-03-01T09:00:04.000Z","message":null}`,
	)
	var got []string
	for _, e := range path {
		if m, ok := EntryMessage(e); ok {
			got = append(got, string(m.Raw))
		}
	}
	want := []string{
		`{"role":"custom","customType":"ext","content":"c","display":false,"details":{"k":1},"timestamp":1772355600000}`,
		`{"role":"branchSummary","summary":"","fromId":"a","timestamp":1772355601000}`,
		`{"role":"compactionSummary","summary":"S","tokensBefore":12,"timestamp":1772355602000}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFileOps(t *testing.T) {
	t.Parallel()
	var f FileOps
	for _, m := range []string{
		`{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"b.ts"}},{"type":"toolCall","name":"read","arguments":{"path":"a.ts"}},{"type":"toolCall","name":"edit","arguments":{"path":"a.ts"}}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","name":"write","arguments":{"path":"/abs/c.ts"}},{"type":"toolCall","name":"Read","arguments":{"path":"x"}},{"type":"toolCall","name":"read","arguments":{"file_path":"y"}},{"type":"toolCall","name":"bash","arguments":{"path":"z"}},{"type":"toolCall","name":"read","arguments":{"path":""}}]}`,
		`{"role":"toolResult","content":[{"type":"toolCall","name":"read","arguments":{"path":"w"}}]}`,
	} {
		f.AddMessage([]byte(m))
	}
	f.addDetails([]byte(`{"readFiles":["r.ts",5],"modifiedFiles":"not an array"}`))
	got := f.Lists()
	want := FileLists{ReadFiles: []string{"b.ts", "r.ts"}, ModifiedFiles: []string{"/abs/c.ts", "a.ts"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lists (-want +got):\n%s", diff)
	}
	if s := got.Suffix(); s != "\n\n<read-files>\nb.ts\nr.ts\n</read-files>\n\n<modified-files>\n/abs/c.ts\na.ts\n</modified-files>" {
		t.Errorf("suffix = %q", s)
	}
	if s := string(got.JSON()); s != `{"readFiles":["b.ts","r.ts"],"modifiedFiles":["/abs/c.ts","a.ts"]}` {
		t.Errorf("details = %s", s)
	}
	var empty FileOps
	if s := empty.Lists().Suffix(); s != "" {
		t.Errorf("empty suffix = %q", s)
	}
	if s := string(empty.Lists().JSON()); s != `{"readFiles":[],"modifiedFiles":[]}` {
		t.Errorf("empty details = %s", s)
	}
}
