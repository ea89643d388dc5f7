package opencode

import (
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// realStore is the data directory the real opencode 1.18.33 wrote (see
// testdata/real-1.18.33/README.md); its session ids change with every run
// of the recipe, so the tests name sessions by their titles.
const realStore = "testdata/real-1.18.33/opencode-data"

// byName returns the imported session with the given name.
func byName(t *testing.T, res *importtest.Result, name string) *migrate.Imported {
	t.Helper()
	for _, s := range res.Sessions {
		if s.Name == name || strings.HasPrefix(name, "New session") && strings.HasPrefix(s.Name, name) {
			return s
		}
	}
	t.Fatalf("no session named %q", name)
	return nil
}

// counts tallies a session's file: thinking blocks, compaction entries,
// custom_message entries by type.
type counts struct {
	Thinking, Compactions, ModelChanges int
	Custom                              map[string]int
}

func countOf(l *importtest.Loaded) counts {
	c := counts{Custom: map[string]int{}}
	for _, e := range l.Entries {
		switch e.Type {
		case jsonl.TypeCompaction:
			c.Compactions++
		case jsonl.TypeModelChange:
			c.ModelChanges++
		case jsonl.TypeCustomMessage, jsonl.TypeCustom:
			ct, _ := e.StringField("customType")
			c.Custom[ct]++
		case jsonl.TypeMessage:
			c.Thinking += strings.Count(string(e.Raw), `{"type":"thinking",`)
		}
	}
	return c
}

func TestRealStore(t *testing.T) {
	t.Parallel()
	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, realStore, opts)
	if len(res.Damage) != 0 || len(res.Skipped) != 0 {
		t.Fatalf("damage %v, skipped %v", res.Damage, res.Skipped)
	}
	if len(res.Sessions) != 8 {
		t.Fatalf("%d sessions, want 8", len(res.Sessions))
	}
	done := "Done. The tool said:\n"
	ls := "hello.txt\npixel.png\n"
	hello := "<path>/home/user/work/app/hello.txt</path>\n<type>file</type>\n<content>\n1: hello opencode\n\n(End of file - total 1 lines)\n</content>"
	missing := "File not found: /home/user/work/app/missing.txt"
	summary := "## Summary\nThe user and the agent inspected the project; nothing is pending."
	stub := func(s string) string { return "Hello from the stub model. You said: " + s }
	cases := []struct {
		name   string
		parent string // the name of the session this one is a subagent of
		want   []importtest.Msg
		counts counts
	}{
		{name: "Say hello", want: []importtest.Msg{
			{Role: "user", Text: "Say hello"},
			{Role: "assistant", Text: stub("Say hello")},
		}, counts: counts{Thinking: 1}},
		{name: "Bash list the files here", want: []importtest.Msg{
			{Role: "user", Text: "BASH: list the files here"},
			{Role: "assistant", ToolCalls: []string{"call_stub4"}},
			{Role: "toolResult", Text: ls, ToolCallID: "call_stub4"},
			{Role: "assistant", Text: done + ls},
			{Role: "user", Text: "READ /home/user/work/app/hello.txt"},
			{Role: "assistant", ToolCalls: []string{"call_stub6"}},
			{Role: "toolResult", Text: hello, ToolCallID: "call_stub6"},
			{Role: "assistant", Text: done + hello},
			{Role: "user", Text: "READ /home/user/work/app/missing.txt"},
			{Role: "assistant", ToolCalls: []string{"call_stub8"}},
			{Role: "toolResult", Text: missing, ToolCallID: "call_stub8"},
			{Role: "assistant", Text: done + missing},
		}, counts: counts{Thinking: 6}},
		{name: "Task explore this project with", counts: counts{Thinking: 2}},
		{name: "Explore project (@general subagent)", parent: "Task explore this project with", want: []importtest.Msg{
			{Role: "user", Text: "SUBAGENT: look around the project and report"},
			{Role: "assistant", Text: "Subagent report: one file, hello.txt."},
		}, counts: counts{Thinking: 1}},
		// opencode run -f: the attachment is synthetic parts (the Read
		// call it stands for and the image), then what the user typed.
		{name: "Called the read tool with", want: []importtest.Msg{
			{Role: "custom", CustomType: "opencode-synthetic", Text: "Called the Read tool with the following input: {\"filePath\":\"/home/user/work/app/pixel.png\"}\nImage read successfully"},
			{Role: "user", Text: `"What is in this image?"`},
			{Role: "assistant", Text: stub("Called the Read tool with the following input: {\"filePath\":\"/home/user/work/app/pixel.png\"}\nI")},
		}, counts: counts{Thinking: 1, Custom: map[string]int{"opencode-synthetic": 1}}},
		// The served session: a note, a user shell command (a synthetic
		// notice and the tool run), a compaction, a turn, and a reverted
		// turn left as a branch.
		{name: "Served session", want: []importtest.Msg{
			{Role: "compactionSummary", Text: summary},
			{Role: "user", Text: "After the compaction: still there?"},
			{Role: "assistant", Text: stub("After the compaction: still there?")},
		}, counts: counts{Thinking: 3, Compactions: 1, Custom: map[string]int{"opencode-synthetic": 1, migrate.LeafType: 1}}},
		{name: "Served session (fork #1)", want: []importtest.Msg{
			{Role: "compactionSummary", Text: summary},
		}, counts: counts{Thinking: 1, Compactions: 1, Custom: map[string]int{"opencode-synthetic": 1}}},
		// The v2 API session (session_message rows).
		{name: "New session", want: []importtest.Msg{
			{Role: "user", Text: "Hello through the v2 API"},
			{Role: "assistant", Text: stub("Hello through the v2 API")},
			{Role: "user", Text: "BASH through the v2 API"},
			{Role: "assistant", ToolCalls: []string{"call_stub21"}},
			{Role: "toolResult", Text: ls + "\nCommand exited with code 0.", ToolCallID: "call_stub21"},
			{Role: "assistant", Text: done + ls + "\nCommand exited with code 0."},
			{Role: "user", Text: "After the model switch"},
			{Role: "assistant", Text: stub("After the model switch")},
			{Role: "user", Text: "After the agent switch"},
			{Role: "assistant", Text: stub("After the agent switch")},
			{Role: "user", Text: "What is in this image?\n[file: pixel.png]"},
			{Role: "assistant"},
		}, counts: counts{Thinking: 5, ModelChanges: 1, Custom: map[string]int{"opencode-agent": 1}}},
	}
	for _, c := range cases {
		s := byName(t, res, c.name)
		parentFile := ""
		if c.parent != "" {
			p := byName(t, res, c.parent)
			if s.ParentSourceID != p.SourceID {
				t.Errorf("%s: parent %q, want %q", c.name, s.ParentSourceID, p.SourceID)
			}
			parentFile = "/sessions/" + p.FileName()
		} else if s.ParentSourceID != "" {
			t.Errorf("%s: parent %q", c.name, s.ParentSourceID)
		}
		if s.Cwd != "/home/user/work/app" || !s.CwdKnown || s.SourceVersion != "1.18.33" || s.DateFromFile {
			t.Errorf("%s: cwd %q (%v), version %q, date from file %v", c.name, s.Cwd, s.CwdKnown, s.SourceVersion, s.DateFromFile)
		}
		l := importtest.Load(t, s, parentFile)
		got := l.Messages()
		if c.want != nil {
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
		importtest.CheckToolPairs(t, c.name, got)
		cnt := countOf(l)
		delete(cnt.Custom, migrate.ImportType)
		if c.counts.Custom == nil {
			c.counts.Custom = map[string]int{}
		}
		if diff := cmp.Diff(c.counts, cnt); diff != "" {
			t.Errorf("%s counts (-want +got):\n%s", c.name, diff)
		}
	}

	// The task's result names the child session, which holds the
	// subagent's conversation.
	task := importtest.Load(t, byName(t, res, "Task explore this project with"), "").Messages()
	if len(task) != 4 || task[1].ToolCalls == nil || !strings.Contains(task[2].Text, "Subagent report: one file, hello.txt.") {
		t.Errorf("task session: %+v", task)
	}

	// The shell command run from the served session stays a tool call of
	// its own, after the synthetic notice, on the branch before the
	// compaction; the reverted turn is kept as a branch.
	served := string(byName(t, res, "Served session").Bytes(""))
	for _, frag := range []string{
		`"customType":"opencode-synthetic","content":[{"type":"text","text":"The following tool was executed by the user"}],"display":false`,
		`"arguments":{"command":"cat hello.txt"}`,
		`"content":[{"type":"text","text":"hello opencode\n"}],"isError":false`,
		`"text":"A note that gets no reply."`,
		`"text":"This turn will be reverted."`,
		`"tokensBefore":120`,
	} {
		if !strings.Contains(served, frag) {
			t.Errorf("served session lacks %s", frag)
		}
	}
	// The synthetic image of the -f session is in the synthetic message,
	// not in what the user typed.
	img := string(byName(t, res, "Called the read tool with").Bytes(""))
	if !strings.Contains(img, `"display":false`) || !strings.Contains(img, `{"type":"image","data":"iVBORw0KGgo`) {
		t.Errorf("-f session: synthetic image missing")
	}
	// v2: the model switch is a model_change, later replies name the new
	// model; the failed turn is an error.
	v2 := string(byName(t, res, "New session").Bytes(""))
	for _, frag := range []string{
		`"type":"model_change"`, `"provider":"stub","modelId":"stub-model-2"`,
		`"provider":"stub","model":"stub-model-2"`,
		`"stopReason":"error","errorMessage":"OpenAI Chat media must contain valid base64"`,
		`"thinking":"I should run a shell command."`,
	} {
		if !strings.Contains(v2, frag) {
			t.Errorf("v2 session lacks %s", frag)
		}
	}
	importtest.CheckReimport(t, Source{}, realStore, opts, res)
}

// copyStore copies the real store into a temporary directory, so that a
// test can add rows to it.
func copyStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.Walk(realStore, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(realStore, p)
		dst := filepath.Join(dir, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestV2MessageTypes adds to a copy of the real store a v2 session with
// the session_message types the recipe cannot make opencode 1.18.33 write
// (its v2 API has no shell command and its compaction writes nothing),
// shaped as opencode's own schema for them, and an empty session.
func TestV2MessageTypes(t *testing.T) {
	t.Parallel()
	dir := copyStore(t)
	db, err := sql.Open("sqlite", filepath.Join(dir, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	var project string
	if err := db.QueryRow(`SELECT id FROM project`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	const t0 = 1795443300000
	for _, id := range []string{"ses_v2types", "ses_empty"} {
		if _, err := db.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, 'slug', '/home/user/work/app', ?, '1.18.33', ?, ?)`, id, project, "title of "+id, t0, t0); err != nil {
			t.Fatal(err)
		}
	}
	rows := []struct{ typ, data string }{
		{"system", `{"time":{"created":1795443300001},"text":"You are in plan mode."}`},
		{"user", `{"time":{"created":1795443300002},"text":"run it","files":[{"uri":"data:image/png;base64,iVBORw0KGgo=","mime":"image/png","name":"p.png"}]}`},
		{"synthetic", `{"time":{"created":1795443300003},"sessionID":"ses_v2types","text":"The user attached p.png"}`},
		{"shell", `{"time":{"created":1795443300004,"completed":1795443300005},"callID":"call_sh","command":"ls","output":"a.txt\n"}`},
		{"assistant", `{"time":{"created":1795443300006},"agent":"build","model":{"id":"m1","providerID":"anthropic"},"content":[{"type":"tool","id":"call_1","name":"read","state":{"status":"error","input":{"filePath":"/x"},"content":[],"structured":{},"error":{"type":"unknown","message":"no such file"}},"time":{"created":1}},{"type":"tool","id":"call_2","name":"bash","state":{"status":"running","input":{},"structured":{},"content":[]},"time":{"created":1}}],"finish":"tool-calls","cost":0.5,"tokens":{"input":1000,"output":10,"reasoning":0,"cache":{"read":200,"write":0}}}`},
		{"compaction", `{"time":{"created":1795443300007},"reason":"auto","summary":"the summary","recent":"the recent record"}`},
		{"user", `{"time":{"created":1795443300008},"text":"after"}`},
		{"assistant", `{"time":{"created":1795443300009},"agent":"build","model":{"id":"m1","providerID":"anthropic"},"content":[{"type":"text","id":"t","text":"done"}],"finish":"stop"}`},
		{"future-type", `{"time":{"created":1795443300010},"x":1}`},
		{"user", `not json`},
	}
	for i, r := range rows {
		if _, err := db.Exec(`INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, 'ses_v2types', ?, ?, ?, ?, ?)`,
			"msg_v2_"+string(rune('a'+i)), r.typ, i+1, t0+i, t0+i, r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Pos != "session_message msg_v2_j" {
		t.Errorf("damage %v", res.Damage)
	}
	want := []*migrate.Skip{{SourceID: "ses_empty", Path: filepath.Join(dir, "opencode.db"), Reason: migrate.SkipEmpty}}
	if diff := cmp.Diff(want, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(res.Sessions) != 9 {
		t.Errorf("%d sessions", len(res.Sessions))
	}
	s := res.ByID(t, "ses_v2types")
	l := importtest.Load(t, s, "")
	got := l.Messages()
	wantMsgs := []importtest.Msg{
		{Role: "compactionSummary", Text: "the summary\n\nthe recent record"},
		{Role: "user", Text: "after"},
		{Role: "assistant", Text: "done"},
	}
	if diff := cmp.Diff(wantMsgs, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	file := string(s.Bytes(""))
	for _, frag := range []string{
		`"customType":"opencode-system","content":"You are in plan mode.","display":false`,
		`"content":[{"type":"text","text":"run it"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`,
		`"customType":"opencode-synthetic","content":"The user attached p.png","display":false`,
		`"customType":"opencode-shell","content":"Shell command: ls\na.txt\n","display":true,"details":{"callID":"call_sh","command":"ls","output":"a.txt\n"}`,
		`"toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"no such file"}],"isError":true`,
		`"toolCallId":"call_2","toolName":"bash","content":[{"type":"text","text":"(the tool did not finish)"}],"isError":true`,
		`"tokensBefore":1210,"details":{"reason":"auto"}`,
		`"customType":"opencode-message","data":{"type":"future-type","data":{"time":{"created":1795443300010},"x":1}}`,
	} {
		if !strings.Contains(file, frag) {
			t.Errorf("session lacks %s", frag)
		}
	}
}
