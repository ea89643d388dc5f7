package migrate

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/tree"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

func user(text string) []byte { return UserMessage(TextContent(text), t0.UnixMilli()) }

// texts returns the first text of each message line of a session, in
// file order, and the leaf's path as texts.
func texts(t *testing.T, s *Imported) (file, path []string) {
	t.Helper()
	p := jsonl.ParseFile(s.Bytes(""))
	text := func(e *jsonl.Entry) string {
		m, ok := e.Field("message")
		if !ok {
			return e.Type
		}
		c, _ := jsonl.Lookup(m, "content")
		var out string
		_ = jsonl.Elements(c, func(b []byte) bool {
			v, _ := jsonl.Lookup(b, "text")
			out, _ = jsonl.String(v)
			return false
		})
		return out
	}
	for i := 1; i < len(p.Entries); i++ {
		file = append(file, text(&p.Entries[i]))
	}
	ix := tree.Build(p.Entries)
	for _, e := range ix.LeafBranch() {
		path = append(path, text(e))
	}
	return file, path
}

func TestBuilderOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		build    func(b *Builder)
		file     []string
		leafPath []string
	}{
		{
			name: "fork, active branch last",
			build: func(b *Builder) {
				a := b.Message("a", nil, t0, user("a"))
				b.Message("b1", a, t0, user("b1"))
				b2 := b.Message("b2", a, t0, user("b2"))
				b.Message("c2", b2, t0, user("c2"))
				b.Message("b3", a, t0, user("b3 abandoned later"))
				b.SetLeaf(nodeByKey(b, "c2"))
			},
			file:     []string{"custom", "session_info", "a", "b1", "b3 abandoned later", "b2", "c2"},
			leafPath: []string{"custom", "session_info", "a", "b2", "c2"},
		},
		{
			name: "leaf with children gets a marker",
			build: func(b *Builder) {
				a := b.Message("a", nil, t0, user("a"))
				b.Message("b", a, t0, user("reverted"))
				b.SetLeaf(a)
			},
			file:     []string{"custom", "session_info", "a", "reverted", "custom"},
			leafPath: []string{"custom", "session_info", "a", "custom"},
		},
		{
			name: "default leaf follows the last node down",
			build: func(b *Builder) {
				a := b.Message("a", nil, t0, user("a"))
				b.Message("x", nil, t0, user("second root"))
				b.Message("a", a, t0, user("same key again"))
			},
			file:     []string{"custom", "session_info", "second root", "a", "same key again"},
			leafPath: []string{"custom", "session_info", "a", "same key again"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuilder("test", "s1")
			b.SetName("N")
			c.build(b)
			s := b.Finish(Meta{SourcePath: "/src", Start: t0, Cwd: "/w", CwdKnown: true})
			file, path := texts(t, s)
			if diff := cmp.Diff(c.file, file); diff != "" {
				t.Errorf("file order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.leafPath, path); diff != "" {
				t.Errorf("leaf path (-want +got):\n%s", diff)
			}
			again := NewBuilder("test", "s1")
			again.SetName("N")
			c.build(again)
			if s2 := again.Finish(Meta{SourcePath: "/src", Start: t0, Cwd: "/w", CwdKnown: true}); string(s2.Bytes("")) != string(s.Bytes("")) {
				t.Error("building twice gave different bytes")
			}
		})
	}
}

func nodeByKey(b *Builder, key string) *Node {
	for _, n := range b.nodes {
		if n.key == key {
			return n
		}
	}
	return nil
}

func TestEntryShapes(t *testing.T) {
	t.Parallel()
	b := NewBuilder("test", "s1")
	r := b.Message("u", nil, t0, user("hi"))
	c := b.Compaction("c", r, t0, "sum", 1234, nil)
	k := b.Message("k", c, t0, user("kept"))
	b.ModelChange("m", k, t0, "p", "m1")
	b.ThinkingLevel("l", b.Last(), t0, "high")
	b.CustomMessage("cm", b.Last(), t0, "ct", jsonl.AppendString(nil, "note"), false, nil)
	b.Custom("cu", b.Last(), t0, "x", nil)
	s := b.Finish(Meta{SourcePath: "/src", SourceVersion: "9", ParentSourceID: "p0", Start: t0, Cwd: "/w"})
	got := string(s.Bytes("/parent.jsonl"))
	id := regexp.MustCompile(`"(id|parentId|firstKeptEntryId)":"[0-9a-f]{8}"`)
	got = id.ReplaceAllString(got, `"$1":"ID"`)
	got = regexp.MustCompile(`"digest":"[0-9a-f]{64}"`).ReplaceAllString(got, `"digest":"D"`)
	want := strings.Join([]string{
		`{"type":"session","version":3,"id":"` + s.ID + `","timestamp":"2026-01-02T03:04:05.006Z","cwd":"/w","parentSession":"/parent.jsonl"}`,
		`{"type":"custom","customType":"sessctl-import","data":{"source":"test","sourcePath":"/src","sourceId":"s1","sourceVersion":"9","parentSourceId":"p0","digest":"D"},"id":"ID","parentId":null,"timestamp":"2026-01-02T03:04:05.006Z"}`,
		`{"type":"message","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1767323045006}}`,
		`{"type":"compaction","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z","summary":"sum","firstKeptEntryId":"ID","tokensBefore":1234}`,
		`{"type":"message","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z","message":{"role":"user","content":[{"type":"text","text":"kept"}],"timestamp":1767323045006}}`,
		`{"type":"model_change","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z","provider":"p","modelId":"m1"}`,
		`{"type":"thinking_level_change","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z","thinkingLevel":"high"}`,
		`{"type":"custom_message","customType":"ct","content":"note","display":false,"id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z"}`,
		`{"type":"custom","customType":"x","id":"ID","parentId":"ID","timestamp":"2026-01-02T03:04:05.006Z"}`,
	}, "\n") + "\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(s.ID) || s.ID != SessionID("test", "s1") || s.ID == SessionID("test", "s2") {
		t.Errorf("session id %s", s.ID)
	}
	if s.FileName() != "2026-01-02T03-04-05-006Z_"+s.ID+".jsonl" || s.Entries() != 8 || s.Messages != 3 {
		t.Errorf("file name %s, %d entries, %d messages", s.FileName(), s.Entries(), s.Messages)
	}
}

func TestAssistantAndArgs(t *testing.T) {
	t.Parallel()
	a := Assistant{API: "x", Provider: "p", Model: "m", Timestamp: 5,
		Content: [][]byte{ThinkingBlock("t", "sig", false), ToolCallBlock("c1", "read", ObjectArgs([]byte(`"{\"b\":1,\"a\":2.0}"`)))},
		Usage:   message.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}}
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"sig"},{"type":"toolCall","id":"c1","name":"read","arguments":{"b":1,"a":2}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":5}`
	if got := string(a.JSON()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for in, want := range map[string]string{`[1,2]`: `{"input":[1,2]}`, `"plain"`: `{"input":"plain"}`, ``: `{}`, `null`: `{}`, `{"x":1}`: `{"x":1}`} {
		if got := string(ObjectArgs([]byte(in))); got != want {
			t.Errorf("ObjectArgs(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestCheckReplace(t *testing.T) {
	t.Parallel()
	build := func(texts ...string) *Imported {
		b := NewBuilder("test", "s1")
		var tip *Node
		for i, x := range texts {
			tip = b.Message(string(rune('a'+i)), tip, t0, user(x))
		}
		return b.Finish(Meta{SourcePath: "/src", Start: t0, Cwd: "/w"})
	}
	old := build("one").Bytes("")
	if err := CheckReplace(old, SessionID("test", "s1")); err != nil {
		t.Errorf("untouched import refused: %v", err)
	}
	appended := append(append([]byte(nil), old...), `{"type":"message","id":"abcd1234","parentId":"x","timestamp":"2026-01-02T03:04:05.006Z","message":{"role":"user","content":"mine","timestamp":1}}`+"\n"...)
	for name, c := range map[string]struct {
		data []byte
		id   string
	}{
		"continued in pi": {appended, SessionID("test", "s1")},
		"other session":   {old, SessionID("test", "s2")},
		"not a session":   {[]byte("hello\n"), SessionID("test", "s1")},
	} {
		if err := CheckReplace(c.data, c.id); !errors.Is(err, ErrNotImported) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDamageError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    Damage
		want string
	}{
		{Damage{Path: "/a.jsonl", Line: 3, Err: errors.New("bad")}, "/a.jsonl:3: bad"},
		{Damage{Path: "/s.db", Pos: "message 7", Err: errors.New("bad")}, "/s.db (message 7): bad"},
		{Damage{Path: "/a.json", Err: errors.New("bad")}, "/a.json: bad"},
	} {
		if got := c.d.Error(); got != c.want || !errors.Is(&c.d, ErrDamaged) {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestDecodeRefusesInvalidUTF8: DecodeLine and DecodeJSON refuse bytes
// that are not UTF-8 (encoding/json would read them as U+FFFD), naming
// the first; escapes, even of lone surrogates, and real U+FFFD pass.
func TestDecodeRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	var v map[string]any
	for _, bad := range []string{"{\"t\":\"a\xffb\"}", "{\"t\":\"\xed\xa0\x80\"}", "{\"t\":\"\xe2\x82\"}"} {
		err := DecodeLine([]byte(bad), &v)
		if !errors.Is(err, ErrInvalidUTF8) || !strings.Contains(err.Error(), "byte ") {
			t.Errorf("DecodeLine(%q): %v, want ErrInvalidUTF8 naming the byte", bad, err)
		}
		if err := DecodeJSON([]byte(bad), &v); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("DecodeJSON(%q): %v, want ErrInvalidUTF8", bad, err)
		}
	}
	if err := CheckUTF8([]byte("{\"t\":\"ab\xff\"}")); err == nil || !strings.Contains(err.Error(), "byte 8 (0xff)") {
		t.Errorf("CheckUTF8: %v, want byte 8 (0xff)", err)
	}
	for _, good := range []string{`{"t":"\ud800"}`, "{\"t\":\"\uFFFD é 日本\"}"} {
		if err := DecodeLine([]byte(good), &v); err != nil {
			t.Errorf("DecodeLine(%q): %v", good, err)
		}
	}
}

// The message builders write what package message writes for the same
// message: pi's format is encoded in one place.
func TestBuildersAreMessages(t *testing.T) {
	t.Parallel()
	user := UserMessage(Array([][]byte{TextBlock("hi <&>"), ImageBlock("AAAA", "image/png")}), 7)
	want, _ := message.Encode(&message.User{Content: message.Blocks(message.NewText("hi <&>"), message.NewImage("AAAA", "image/png")), Timestamp: 7})
	if string(user) != string(want) {
		t.Errorf("UserMessage = %s, message writes %s", user, want)
	}
	if got := string(UserMessage([]byte(`"plain"`), 1)); got != `{"role":"user","content":"plain","timestamp":1}` {
		t.Errorf("UserMessage of a string = %s", got)
	}
	res := ToolResultMessage("c1", "bash", TextContent("out"), []byte(`{"b":1,"a":2}`), true, 9)
	m, err := message.Decode(res)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := m.(*message.ToolResult)
	if !ok || tr.ToolCallID != "c1" || tr.ToolName != "bash" || !tr.IsError || tr.Timestamp != 9 || string(tr.Details.(json.RawMessage)) != `{"b":1,"a":2}` {
		t.Errorf("ToolResultMessage decodes as %#v", m)
	}
	if again, _ := message.Encode(tr); string(again) != string(res) {
		t.Errorf("ToolResultMessage = %s, message writes %s", res, again)
	}
	// What is not JSON cannot break a line: arguments become {}, details
	// a string.
	if got := string(ToolCallBlock("c", "x", []byte("{nope"))); got != `{"type":"toolCall","id":"c","name":"x","arguments":{}}` {
		t.Errorf("ToolCallBlock of bad arguments = %s", got)
	}
	if got := string(ToolResultMessage("c", "x", TextContent("o"), []byte("{nope"), false, 1)); !json.Valid([]byte(got)) || !strings.Contains(got, `"details":"{nope"`) {
		t.Errorf("ToolResultMessage with bad details = %s", got)
	}
}
