package gemini

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// expected reads a chat independently of the importer: its messages
// (the last record of each id, in first-appearance order), each user
// message with its text, each gemini message as an assistant message
// (text and call ids) followed by one toolResult per call.
func expected(t *testing.T, path string) []importtest.Msg {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if strings.HasSuffix(path, ".json") {
		var doc struct{ Messages []map[string]any }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		msgs = doc.Messages
	} else {
		pos := map[string]int{}
		for _, line := range strings.Split(string(data), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			id, ok := m["id"].(string)
			if !ok {
				continue
			}
			if i, seen := pos[id]; seen {
				msgs[i] = m
				continue
			}
			pos[id] = len(msgs)
			msgs = append(msgs, m)
		}
	}
	text := func(c any) string {
		if s, ok := c.(string); ok {
			return s
		}
		var out []string
		list, _ := c.([]any)
		for _, p := range list {
			pm := p.(map[string]any)
			if s, ok := pm["text"].(string); ok && pm["thought"] != true {
				out = append(out, s)
			}
		}
		return strings.Join(out, "\n")
	}
	var out []importtest.Msg
	for _, m := range msgs {
		switch m["type"] {
		case "user":
			out = append(out, importtest.Msg{Role: "user", Text: text(m["content"])})
		case "gemini":
			a := importtest.Msg{Role: "assistant", Text: text(m["content"])}
			calls, _ := m["toolCalls"].([]any)
			var results []importtest.Msg
			for _, c := range calls {
				cm := c.(map[string]any)
				a.ToolCalls = append(a.ToolCalls, cm["id"].(string))
				res := ""
				for _, r := range cm["result"].([]any) {
					resp := r.(map[string]any)["functionResponse"].(map[string]any)["response"].(map[string]any)
					var texts []string
					if s, ok := resp["output"].(string); ok {
						texts = append(texts, s)
					}
					if s, ok := resp["error"].(string); ok {
						texts = append(texts, s)
					}
					res = strings.Join(texts, "\n")
				}
				results = append(results, importtest.Msg{Role: "toolResult", ToolCallID: cm["id"].(string), Text: res})
			}
			out = append(out, a)
			out = append(out, results...)
		}
	}
	return out
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	root := importtest.Corpus(t, "gemini")
	cases := []struct {
		dir, file, id, model, name string
	}{
		{"json-hashdir-2025-10", "tmp/56cfacee57fb9791a4f38e595662752e07022cdeb39cd7127005427d7361037b/chats/session-2025-10-30T23-49-93c0da34.json", "93c0da34-5996-4701-8f59-b9c95d0c57bd", "gemini-2.5-pro", ""},
		{"json-namedir-summary-2026-03", "tmp/dashboard-mictlan/chats/session-2026-03-02T11-46-70b8cd2f.json", "70b8cd2f-da01-45bf-910a-f79c5602185f", "gemini-2.5-flash", "Resume last Gemini CLI session"},
		{"jsonl-2026-04", "tmp/user/chats/session-2026-04-24T23-16-c8b2cbd9.jsonl", "c8b2cbd9-67d4-4f6f-9272-108ab4868b29", "gemini-3-flash-preview", ""},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.dir] = true
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(root, c.dir, "gemini-home")
			opts := migrate.ImportOptions{Cwd: "/projects/given"}
			res := importtest.Import(t, Source{}, home, opts)
			if len(res.Damage) > 0 || len(res.Sessions) != 1 {
				t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
			}
			s := res.ByID(t, c.id)
			// projectHash is of the unscrubbed path: the cwd is the one given.
			if s.Cwd != "/projects/given" || s.CwdKnown || s.Name != c.name {
				t.Errorf("cwd %q (known %v), name %q", s.Cwd, s.CwdKnown, s.Name)
			}
			l := importtest.Load(t, s, "")
			got := l.Messages()
			if diff := cmp.Diff(expected(t, filepath.Join(home, c.file)), got); diff != "" {
				t.Errorf("context (-source +imported):\n%s", diff)
			}
			importtest.CheckToolPairs(t, c.id, got)
			if !strings.Contains(string(l.Context.Model), c.model) {
				t.Errorf("model %s, want %s", l.Context.Model, c.model)
			}
			importtest.CheckReimport(t, Source{}, home, opts, res)
		})
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() && !seen[e.Name()] {
			t.Run(e.Name(), func(t *testing.T) {
				t.Parallel()
				res := importtest.Import(t, Source{}, filepath.Join(root, e.Name(), "gemini-home"), migrate.ImportOptions{Cwd: "/x"})
				for _, s := range res.Sessions {
					importtest.CheckToolPairs(t, s.SourceID, importtest.Load(t, s, "").Messages())
				}
			})
		}
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRewindSubagentAndCwd: a rewind keeps the rewound messages as an
// abandoned branch written first; a rewritten id replaces its record; a
// call without a result is answered; the cwd comes from the hash of a
// path the chat names; a subagent chat links to its parent; a damaged
// line is reported.
func TestRewindSubagentAndCwd(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), ".gemini")
	h := sha256.Sum256([]byte("/srv/proj"))
	hash := hex.EncodeToString(h[:])
	chats := filepath.Join(home, "tmp", hash, "chats")
	main := filepath.Join(chats, "session-2026-05-01T10-00-aaaaaaaa.jsonl")
	write(t, main, strings.Join([]string{
		`{"sessionId":"aaaaaaaa-1","projectHash":"` + hash + `","startTime":"2026-05-01T10:00:00.000Z","lastUpdated":"2026-05-01T10:00:00.000Z","kind":"main"}`,
		`{"id":"u1","timestamp":"2026-05-01T10:00:01.000Z","type":"user","content":[{"text":"first"}]}`,
		`{"id":"g1","timestamp":"2026-05-01T10:00:02.000Z","type":"gemini","content":"draft","model":"gemini-x"}`,
		`{"id":"u2","timestamp":"2026-05-01T10:00:03.000Z","type":"user","content":[{"text":"rewound question"}]}`,
		`{"id":"g2","timestamp":"2026-05-01T10:00:04.000Z","type":"gemini","content":"rewound answer","model":"gemini-x"}`,
		`{"$rewindTo":"u2"}`,
		`{"id":"u3","timestamp":"2026-05-01T10:00:05.000Z","type":"user","content":[{"text":"second"}]}`,
		`{broken`,
		`{"id":"g3","timestamp":"2026-05-01T10:00:06.000Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"read_file","args":{"absolute_path":"/srv/proj/a.go"},"status":"executing"}],"model":"gemini-x"}`,
		`{"id":"g3","timestamp":"2026-05-01T10:00:06.000Z","type":"gemini","content":"reading","toolCalls":[{"id":"c1","name":"read_file","args":{"absolute_path":"/srv/proj/a.go"},"status":"success","result":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"package a"}}}]},{"id":"c2","name":"ls","args":{},"status":"cancelled"}],"tokens":{"input":10,"output":2,"cached":4,"thoughts":3,"tool":0,"total":15},"model":"gemini-x"}`,
		`{"$set":{"summary":"Reading a"}}`,
		`{"id":"i1","timestamp":"2026-05-01T10:00:07.000Z","type":"info","content":"Request cancelled."}`,
	}, "\n")+"\n")
	write(t, filepath.Join(chats, "aaaaaaaa-1", "sub-1.jsonl"),
		`{"sessionId":"sub-1","projectHash":"`+hash+`","startTime":"2026-05-01T10:00:06.500Z","kind":"subagent","directories":["/srv/proj"]}`+"\n"+
			`{"id":"s1","timestamp":"2026-05-01T10:00:06.600Z","type":"user","content":[{"text":"look"}]}`+"\n")
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Line != 8 || res.Damage[0].Path != main {
		t.Fatalf("damage %v, want line 8 of %s", res.Damage, main)
	}
	s := res.ByID(t, "aaaaaaaa-1")
	if s.Cwd != "/srv/proj" || !s.CwdKnown || s.Name != "Reading a" {
		t.Errorf("cwd %q known %v name %q", s.Cwd, s.CwdKnown, s.Name)
	}
	l := importtest.Load(t, s, "")
	got := l.Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "first"},
		{Role: "assistant", Text: "draft"},
		{Role: "user", Text: "second"},
		{Role: "assistant", Text: "reading", ToolCalls: []string{"c1", "c2"}},
		{Role: "toolResult", Text: "package a", ToolCallID: "c1"},
		{Role: "toolResult", Text: "(no result recorded; status cancelled)", ToolCallID: "c2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	var all []string
	for _, e := range l.Entries {
		all = append(all, string(e.Raw))
	}
	file := strings.Join(all, "\n")
	if !strings.Contains(file, "rewound answer") || strings.Index(file, "rewound answer") > strings.Index(file, `"second"`) {
		t.Errorf("rewound branch missing or not written before the active one")
	}
	for _, frag := range []string{`"usage":{"input":6,"output":5,"cacheRead":4,"cacheWrite":0,"totalTokens":15`, `"customType":"gemini-info"`, `"isError":true`} {
		if !strings.Contains(file, frag) {
			t.Errorf("file lacks %s", frag)
		}
	}
	sub := res.ByID(t, "sub-1")
	if sub.ParentSourceID != "aaaaaaaa-1" || sub.Cwd != "/srv/proj" {
		t.Errorf("subagent parent %q cwd %q", sub.ParentSourceID, sub.Cwd)
	}
	importtest.Load(t, sub, "/p/parent.jsonl")
}

// TestProjectRoot: newer builds name the project directory and record its
// root in .project_root.
func TestProjectRoot(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), ".gemini")
	write(t, filepath.Join(home, "tmp", "proj", ".project_root"), "/home/me/proj\n")
	write(t, filepath.Join(home, "tmp", "proj", "chats", "session-2026-05-01T10-00-bbbbbbbb.json"),
		`{"sessionId":"bbbbbbbb-1","projectHash":"x","startTime":"2026-05-01T10:00:00.000Z","lastUpdated":"2026-05-01T10:00:00.000Z","messages":[{"id":"u1","timestamp":"2026-05-01T10:00:01.000Z","type":"user","content":"hi"}]}`)
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{Cwd: "/fallback"})
	if s := res.ByID(t, "bbbbbbbb-1"); s.Cwd != "/home/me/proj" || !s.CwdKnown {
		t.Errorf("cwd %q known %v", s.Cwd, s.CwdKnown)
	}
}
