package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
)

// Tests of fork, branch, compact, label, name and delete, run in-process.

// mutRun runs the CLI with stdin and returns stdout, stderr and the exit
// code.
func mutRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// mutStore points PI_CODING_AGENT_DIR at a fresh agent directory and
// returns it with a project cwd.
func mutStore(t *testing.T) (agent, cwd string) {
	t.Helper()
	root := t.TempDir()
	agent, cwd = filepath.Join(root, "agent"), filepath.Join(root, "proj")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	return agent, cwd
}

// mutIDs gives distinct 8-hex-digit entry ids.
func mutIDs() func() string {
	n := uint32(0)
	return func() string {
		n++
		return fmt.Sprintf("%08x", n*0x9e3779b1)
	}
}

func mutMsg(role string, fields string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"role":%q,%s,"timestamp":1772355600000}`, role, fields))
}

func mutAssistant(text string, calls ...string) json.RawMessage {
	blocks := []string{fmt.Sprintf(`{"type":"text","text":%q}`, text)}
	for i, c := range calls {
		name, path, _ := strings.Cut(c, " ")
		blocks = append(blocks, fmt.Sprintf(`{"type":"toolCall","id":"call%d","name":%q,"arguments":{"path":%q}}`, i, name, path))
	}
	return mutMsg("assistant", `"content":[`+strings.Join(blocks, ",")+`],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"`)
}

func mutToolResult(n int) json.RawMessage {
	return mutMsg("toolResult", fmt.Sprintf(`"toolCallId":"call0","toolName":"read","content":[{"type":"text","text":%q}],"isError":false`, strings.Repeat("r", n)))
}

// mutSession writes a session in the store: two user turns with tool
// calls. It returns the file and the ids of its entries in order.
func mutSession(t *testing.T, cwd string) (string, []string) {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone, NewEntryID: mutIDs()}).Create(t.Context(), cwd, engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	add := func(m json.RawMessage) {
		id, err := s.AppendMessage(rawMessage(m))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	add(mutMsg("user", `"content":"fix the parser in parse.go"`))
	add(mutAssistant("Reading it.", "read parse.go"))
	add(mutToolResult(4000))
	add(mutAssistant("Fixing.", "edit parse.go"))
	add(mutToolResult(40))
	add(mutMsg("user", `"content":"now add tests"`))
	add(mutAssistant("Writing tests.", "write parse_test.go"))
	add(mutToolResult(40))
	add(mutAssistant("Done: tests pass."))
	file := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return file, ids
}

// reload opens a session read-only.
func reload(t *testing.T, path string) *engine.Session {
	t.Helper()
	s, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ctxRaws renders a context's messages for comparison.
func ctxRaws(c compaction.Context) []string {
	out := []string{}
	for _, m := range c.Messages {
		out = append(out, string(m.Raw))
	}
	return out
}

// holdLock opens path for writing and keeps it open for the test.
func holdLock(t *testing.T, path string) {
	t.Helper()
	w, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(t.Context(), path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestForkCommand(t *testing.T) {
	agent, cwd := mutStore(t)
	src, ids := mutSession(t, cwd)
	srcID := reload(t, src).SessionID()
	other := filepath.Join(filepath.Dir(cwd), "other")

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
		leaf     string // entry the fork's context must equal the source's context at
		cwd      string
		dir      string
		all      bool
	}{
		{name: "active leaf", args: []string{"fork", srcID[:6], "--json"}, leaf: ids[8], cwd: cwd, dir: filepath.Dir(src)},
		{name: "at an entry prefix", args: []string{"fork", src, "--at", ids[5][:5], "--json"}, leaf: ids[5], cwd: cwd, dir: filepath.Dir(src)},
		{name: "another cwd", args: []string{"fork", "--json", "--cwd", other, "--at", ids[3], srcID}, leaf: ids[3], cwd: other,
			dir: layout.DefaultSessionDir(agent, other)},
		{name: "all branches", args: []string{"fork", srcID, "--all", "--json"}, leaf: ids[8], cwd: cwd, dir: filepath.Dir(src), all: true},
		{name: "unknown entry", args: []string{"fork", srcID, "--at", ids[5][:7] + "z"}, wantCode: exitNotFound, wantErr: "did you mean " + ids[5]},
		{name: "--all with --at", args: []string{"fork", srcID, "--all", "--at", ids[1]}, wantCode: exitUsage},
		{name: "no session", args: []string{"fork", "ffffffff"}, wantCode: exitNotFound},
		{name: "no argument", args: []string{"fork"}, wantCode: exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := mutRun(t, "", tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
			}
			if tc.wantCode != 0 {
				if !strings.Contains(errOut, tc.wantErr) {
					t.Errorf("stderr %q lacks %q", errOut, tc.wantErr)
				}
				return
			}
			var got struct {
				ID, Path, ParentSession, Cwd, LeafID string
				Entries                              int
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.ParentSession != src || got.Cwd != tc.cwd || filepath.Dir(got.Path) != tc.dir {
				t.Errorf("fork = %+v", got)
			}
			f := reload(t, got.Path)
			h := f.Header()
			if h.ID != got.ID || h.ParentSession != src || h.Cwd != tc.cwd {
				t.Errorf("header = %+v", h)
			}
			if leaf, _ := f.LeafID(); leaf != got.LeafID {
				t.Errorf("leaf %s, output says %s", leaf, got.LeafID)
			}
			want := ctxRaws(reload(t, src).ContextAt(compaction.LeafID(tc.leaf)))
			if diff := cmp.Diff(want, ctxRaws(f.Context())); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
		})
	}
	// A file outside the store is forked into the store --store names
	// (pi's by default), in its folder for the cwd, and no lock stays
	// beside the fork.
	elsewhere := filepath.Join(t.TempDir(), "copy.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(elsewhere, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dirStore := t.TempDir()
	for _, x := range []struct {
		args []string
		dir  string
	}{
		{[]string{"fork", elsewhere, "--json"}, layout.DefaultSessionDir(agent, cwd)},
		{[]string{"fork", elsewhere, "--all", "--json"}, layout.DefaultSessionDir(agent, cwd)},
		{[]string{"fork", "--store", dirStore, elsewhere, "--json"}, dirStore},
		{[]string{"fork", "--all", "--store", dirStore, elsewhere, "--json"}, dirStore},
	} {
		out, errOut, code := mutRun(t, "", x.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", x.args, code, errOut)
		}
		var got struct{ Path string }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v: %s", x.args, err, out)
		}
		if filepath.Dir(got.Path) != x.dir {
			t.Errorf("%v: the fork is %s, want it in %s", x.args, got.Path, x.dir)
		}
		for _, side := range []string{got.Path + ".lock", got.Path + ".owner", elsewhere + ".lock"} {
			if _, err := os.Lstat(side); err == nil {
				t.Errorf("%v: %s stays", x.args, side)
			}
		}
	}
	t.Run("human output", func(t *testing.T) {
		out, _, code := mutRun(t, "", "fork", src)
		fields := strings.Fields(out)
		if code != 0 || len(fields) != 2 || !strings.HasSuffix(fields[1], ".jsonl") {
			t.Fatalf("exit %d, output %q", code, out)
		}
	})
}

func TestBranchCommand(t *testing.T) {
	_, cwd := mutStore(t)
	tests := []struct {
		name     string
		args     func(src string, ids []string) []string
		target   int // index of the entry branched to
		wantCode int
		wantErr  string
		summary  string // the summary written; "*" checks the preamble
		extra    bool   // the context gains a branchSummary message
		plain    bool   // no summary: a sessctl-branch custom entry moves the leaf
	}{
		{name: "no summary: a plain branch keeps the context of the entry", target: 4, plain: true,
			args: func(src string, ids []string) []string { return []string{"branch", src, ids[4]} }},
		{name: "an empty --summary is refused", wantCode: exitUsage, wantErr: "--summary is empty",
			args: func(src string, ids []string) []string { return []string{"branch", src, ids[4], "--summary", ""} }},
		{name: "caller summary", target: 4, summary: "tried tests first", extra: true,
			args: func(src string, ids []string) []string {
				return []string{"branch", src, ids[4][:4], "--summary", "tried tests first"}
			}},
		{name: "summarize the abandoned branch offline", target: 4, summary: "*", extra: true,
			args: func(src string, ids []string) []string { return []string{"branch", "--summarize", src, ids[4]} }},
		{name: "unknown entry suggests close ids", wantCode: exitNotFound, wantErr: "did you mean",
			args: func(src string, ids []string) []string { return []string{"branch", src, "q" + ids[4][1:]} }},
		{name: "--summary with --summarize", wantCode: exitUsage,
			args: func(src string, ids []string) []string {
				return []string{"branch", src, ids[4], "--summary", "x", "--summarize"}
			}},
		{name: "missing entry argument", wantCode: exitUsage,
			args: func(src string, ids []string) []string { return []string{"branch", src} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, ids := mutSession(t, cwd)
			before := mustRead(t, src)
			out, errOut, code := mutRun(t, "", append(tc.args(src, ids), "--json")...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
			}
			if tc.wantCode != 0 {
				if !strings.Contains(errOut, tc.wantErr) || !strings.Contains(errOut, "hint:") {
					t.Errorf("stderr %q lacks %q or a hint", errOut, tc.wantErr)
				}
				if mustRead(t, src) != before {
					t.Errorf("the session changed")
				}
				return
			}
			var got struct {
				From, To, EntryID string
				Summary           *string
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.From != ids[8] || got.To != ids[tc.target] || (got.Summary == nil) != tc.plain {
				t.Errorf("output = %s", out)
			}
			s := reload(t, src)
			leaf, _ := s.LeafID()
			e, _ := s.Entry(leaf)
			wantType := jsonl.TypeBranchSummary
			if tc.plain {
				wantType = jsonl.TypeCustom
			}
			if leaf != got.EntryID || e.Type != wantType || e.ParentID != ids[tc.target] {
				t.Fatalf("leaf %s (%s, parent %s), want a %s %s under %s", leaf, e.Type, e.ParentID, wantType, got.EntryID, ids[tc.target])
			}
			if n := strings.Count(mustRead(t, src), "\n") - strings.Count(before, "\n"); n != 1 {
				t.Errorf("%d lines appended, want 1", n)
			}
			if tc.plain {
				if ct, _ := e.StringField("customType"); ct != "sessctl-branch" {
					t.Errorf("customType %q", ct)
				}
				if d, _ := e.Field("data"); string(d) != `{"from":"`+ids[8]+`"}` {
					t.Errorf("data %s", d)
				}
				if strings.Contains(string(e.Raw), "summary") {
					t.Errorf("a plain branch wrote a summary: %s", e.Raw)
				}
			}
			summary, _ := e.StringField("summary")
			switch tc.summary {
			case "*":
				if !strings.HasPrefix(summary, compaction.BranchSummaryPreamble) || !strings.Contains(summary, "<modified-files>\nparse_test.go\n</modified-files>") {
					t.Errorf("summary = %q", summary)
				}
				if d, _ := e.Field("details"); string(d) != `{"readFiles":[],"modifiedFiles":["parse_test.go"]}` {
					t.Errorf("details = %s", d)
				}
			default:
				if summary != tc.summary {
					t.Errorf("summary = %q, want %q", summary, tc.summary)
				}
			}
			want := ctxRaws(s.ContextAt(compaction.LeafID(ids[tc.target])))
			gotCtx := ctxRaws(s.Context())
			if tc.extra {
				if len(gotCtx) != len(want)+1 || !strings.Contains(gotCtx[len(gotCtx)-1], `"role":"branchSummary"`) {
					t.Fatalf("context does not end with the branch summary: %v", gotCtx[len(gotCtx)-1])
				}
				gotCtx = gotCtx[:len(gotCtx)-1]
			}
			if diff := cmp.Diff(want, gotCtx); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("locked", func(t *testing.T) {
		src, ids := mutSession(t, cwd)
		holdLock(t, src)
		_, errOut, code := mutRun(t, "", "branch", src, ids[2])
		if code != exitLocked || !strings.Contains(errOut, ".lock: ") || !strings.Contains(errOut, "--wait") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		_, _, code = mutRun(t, "", "branch", "--wait", "30ms", src, ids[2])
		if code != exitLocked {
			t.Fatalf("with --wait: exit %d", code)
		}
	})
	t.Run("to the current leaf does nothing", func(t *testing.T) {
		src, ids := mutSession(t, cwd)
		before := mustRead(t, src)
		if _, _, code := mutRun(t, "", "branch", src, ids[8]); code != 0 || mustRead(t, src) != before {
			t.Fatalf("exit %d or the file changed", code)
		}
	})
}

// eLine builds a message entry line for the worked examples.
func eLine(id, parent string, msg string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T09:00:00.000Z","message":%s}`, id, p, msg)
}

func writeSession(t *testing.T, dir string, lines []string) string {
	t.Helper()
	path := filepath.Join(dir, "2026-03-01T09-00-00-000Z_0e000000-0000-4000-8000-000000000000.jsonl")
	hdr := `{"type":"session","version":3,"id":"0e000000-0000-4000-8000-000000000000","timestamp":"2026-03-01T09:00:00.000Z","cwd":` + fmt.Sprintf("%q", dir) + `}`
	if err := os.WriteFile(path, []byte(hdr+"\n"+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompactWorkedExamples runs the worked examples of pi-compaction.md
// section 11 through the CLI: the cut, tokensBefore and details must be
// pi 1.6.0's (compaction's TestPrepareCasesArePis checks them against
// pi; the builder's all-zero usages are no usage, so tokensBefore is
// estimated).
func TestCompactWorkedExamples(t *testing.T) {
	mutStore(t)
	u := func(tok int) string {
		return fmt.Sprintf(`{"role":"user","content":%q,"timestamp":1}`, strings.Repeat("x", 4*tok))
	}
	a := func(tok, total int, call string) string {
		text := 4 * tok
		blocks := ""
		if call != "" {
			name, path, _ := strings.Cut(call, " ")
			text -= len(name) + len(fmt.Sprintf(`{"path":%q}`, path))
			blocks = fmt.Sprintf(`,{"type":"toolCall","id":"c","name":%q,"arguments":{"path":%q}}`, name, path)
		}
		return fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}%s],"provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop","timestamp":1}`,
			strings.Repeat("y", text), blocks, total)
	}
	tr := func(tok int) string {
		return fmt.Sprintf(`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":%q}],"isError":false,"timestamp":1}`, strings.Repeat("r", 4*tok))
	}
	chain := func(msgs ...string) []string {
		var out []string
		for i, m := range msgs {
			parent := ""
			if i > 0 {
				parent = fmt.Sprintf("e%d", i-1)
			}
			if strings.HasPrefix(m, `{"type"`) {
				out = append(out, m)
				continue
			}
			out = append(out, eLine(fmt.Sprintf("e%d", i), parent, m))
		}
		return out
	}
	type result struct {
		FirstKeptEntryID    string
		TokensBefore        float64
		IsSplitTurn         bool
		MessagesToSummarize int
		TurnPrefixMessages  int
		ReadFiles           []string
		ModifiedFiles       []string
	}
	c1 := `{"type":"compaction","id":"e4","parentId":"e3","timestamp":"2026-03-01T09:00:00.000Z","summary":"S1","firstKeptEntryId":"e2","tokensBefore":50200,"details":{"readFiles":["r1.ts","m1.ts"],"modifiedFiles":["m2.ts"]},"fromHook":false}`
	c1plain := `{"type":"compaction","id":"e4","parentId":"e3","timestamp":"2026-03-01T09:00:00.000Z","summary":"S1","firstKeptEntryId":"e2","tokensBefore":50200,"fromHook":false}`
	tests := []struct {
		name  string
		keep  string
		lines []string
		want  result
	}{
		{"E1", "200", chain(u(100), a(100, 0, ""), u(100), a(100, 0, "")),
			result{"e2", 400, false, 2, 0, []string{}, []string{}}},
		{"E2", "201", chain(u(100), a(100, 0, ""), u(100), a(100, 0, "")),
			result{"e1", 400, true, 0, 1, []string{}, []string{}}},
		{"E3", "500", chain(u(100), a(100, 0, ""), u(1), a(6, 0, "read a.ts"), tr(1000), a(13, 0, "edit a.ts"), tr(1), a(10, 0, "write b.ts"), tr(500), a(100, 0, "")),
			result{"e9", 1831, true, 2, 7, []string{}, []string{"a.ts", "b.ts"}}},
		// pi 1.6.0 keeps the call before the trailing tool results (0.73.1
		// kept everything: a compaction of nothing).
		{"E5", "1000", chain(u(100), a(10, 0, ""), u(1), a(6, 0, "read f.ts"), tr(2000)),
			result{"e3", 2117, true, 2, 1, []string{}, []string{}}},
		{"E6", "300", chain(u(1000), a(1006, 0, "read old.ts"), u(100), a(100, 50200, ""), c1, u(1000), a(1005, 0, "edit m1.ts"), u(200), a(100, 3100, "")),
			result{"e7", 3100, false, 4, 0, []string{"r1.ts"}, []string{"m1.ts", "m2.ts"}}}, // 0.58.3: 2 (C1's kept entries were lost)
		{"E8", "300", chain(u(1000), a(1000, 0, ""), u(100), a(100, 50200, ""), c1plain, u(50)),
			result{}}, // everything fits: nothing to compact (0.58.3: e5, 51; 0.73.1: e2, 50250, nothing summarised)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeSession(t, t.TempDir(), tc.lines)
			if tc.want.MessagesToSummarize == 0 && tc.want.TurnPrefixMessages == 0 {
				// pi 1.6.0 prepares nothing: refused, the file left as it
				// was, with a dry run too.
				before := mustRead(t, path)
				want := "sessctl: compact: nothing to compact (session too small): keeping about " + tc.keep + " tokens, no message comes before the cut\nhint: lower --keep-tokens"
				for _, extra := range [][]string{{"--summary", "S"}, {"--dry-run", "--json"}} {
					_, errOut, code := mutRun(t, "", append([]string{"compact", path, "--keep-tokens", tc.keep}, extra...)...)
					if code != exitFailure || !strings.HasPrefix(errOut, want) || mustRead(t, path) != before {
						t.Errorf("%v: exit %d, stderr %q; want exit %d and %q, the file unchanged", extra, code, errOut, exitFailure, want)
					}
				}
				return
			}
			out, errOut, code := mutRun(t, "", "compact", path, "--keep-tokens", tc.keep, "--summary", "S", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got result
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			s := reload(t, path)
			leaf, _ := leafEntry(s)
			if fk, _ := leaf.StringField("firstKeptEntryId"); leaf.Type != jsonl.TypeCompaction || fk != tc.want.FirstKeptEntryID {
				t.Errorf("leaf %s with firstKeptEntryId %q", leaf.Type, fk)
			}
		})
	}
	t.Run("the summary requests reason at the session's thinking level", func(t *testing.T) {
		lines := chain(`{"type":"thinking_level_change","id":"e0","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","thinkingLevel":"medium"}`,
			u(100), a(100, 0, ""), u(1), a(6, 0, "read a.ts"), tr(1000), a(100, 0, ""))
		lines[1] = strings.Replace(lines[1], `"parentId":null`, `"parentId":"e0"`, 1)
		path := writeSession(t, t.TempDir(), lines)
		for _, tc := range []struct {
			args      []string
			reasoning string
		}{
			{nil, ""},                           // the model does not reason
			{[]string{"--reasoning"}, "medium"}, // 0.58.3 asked "high" of the history request only
		} {
			out, errOut, code := mutRun(t, "", append([]string{"compact", path, "--keep-tokens", "500", "--dry-run", "--json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got struct {
				ThinkingLevel string
				Requests      []struct{ Kind, Reasoning string }
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.ThinkingLevel != "medium" || len(got.Requests) != 2 {
				t.Fatalf("%v: thinkingLevel %q, %d requests: %s", tc.args, got.ThinkingLevel, len(got.Requests), out)
			}
			for _, r := range got.Requests {
				if r.Reasoning != tc.reasoning {
					t.Errorf("%v: %s request reasoning %q, want %q", tc.args, r.Kind, r.Reasoning, tc.reasoning)
				}
			}
		}
	})
	t.Run("E7 already compacted", func(t *testing.T) {
		path := writeSession(t, t.TempDir(), append(chain(u(1), a(1, 0, "")),
			`{"type":"compaction","id":"e2","parentId":"e1","timestamp":"2026-03-01T09:00:00.000Z","summary":"S1","firstKeptEntryId":"e0","tokensBefore":5}`))
		before := mustRead(t, path)
		_, errOut, code := mutRun(t, "", "compact", path, "--keep-tokens", "300")
		if code != exitFailure || !strings.Contains(errOut, "already compacted\nhint: ") || mustRead(t, path) != before {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestCompactCommand(t *testing.T) {
	agent, cwd := mutStore(t)
	needSh := func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("needs sh")
		}
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		sh       bool
		wantCode int
		wantErr  string
		summary  func(s string) bool
		source   string
	}{
		{name: "offline summary", args: []string{"--keep-tokens", "30"}, source: "offline",
			summary: func(s string) bool {
				return strings.HasPrefix(s, "## Goal\n- fix the parser in parse.go") && strings.HasSuffix(s, "<modified-files>\nparse.go\n</modified-files>")
			}},
		{name: "caller text", args: []string{"--keep-tokens", "30", "--summary", "my summary"}, source: "caller",
			summary: func(s string) bool { return s == "my summary\n\n<modified-files>\nparse.go\n</modified-files>" }},
		{name: "summary from stdin", args: []string{"--keep-tokens", "30", "--summary-file", "-"}, stdin: "from stdin\n", source: "caller",
			summary: func(s string) bool { return strings.HasPrefix(s, "from stdin\n\n<modified-files>") }},
		{name: "summary command", sh: true, source: "command",
			args:    []string{"--keep-tokens", "30", "--summary-cmd", `printf '%s:' "$SESSCTL_SUMMARY_KIND"; head -c 14`},
			summary: func(s string) bool { return strings.HasPrefix(s, "history:<conversation>\n") }},
		{name: "failing summary command writes nothing", sh: true, wantCode: exitFailure, wantErr: "no model here",
			args: []string{"--keep-tokens", "30", "--summary-cmd", "echo 'no model here' >&2; exit 7"}},
		{name: "two summary sources", wantCode: exitUsage, args: []string{"--summary", "a", "--summary-file", "b"}},
		{name: "summary-json without a command", wantCode: exitUsage, args: []string{"--summary-json"}},
		{name: "negative token count", wantCode: exitUsage, args: []string{"--keep-tokens", "-3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sh {
				needSh(t)
			}
			src, ids := mutSession(t, cwd)
			before := mustRead(t, src)
			out, errOut, code := mutRun(t, tc.stdin, append([]string{"compact", src, "--json"}, tc.args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
			}
			if tc.wantCode != 0 {
				if !strings.Contains(errOut, tc.wantErr) {
					t.Errorf("stderr %q lacks %q", errOut, tc.wantErr)
				}
				if mustRead(t, src) != before {
					t.Errorf("the session changed")
				}
				return
			}
			var got struct {
				EntryID, FirstKeptEntryID, Summary, Summarizer string
				TokensBefore                                   float64
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			// The cut is pi's: the same as Prepare on the branch.
			p, err := compaction.Prepare(reload(t, src).BranchPath(ids[8]), compaction.Settings{KeepRecentTokens: 30, ReserveTokens: 16384})
			if err != nil {
				t.Fatal(err)
			}
			if got.FirstKeptEntryID != p.FirstKeptEntryID || got.FirstKeptEntryID != ids[5] || got.Summarizer != tc.source || got.TokensBefore != 20 {
				t.Errorf("output = %+v", got)
			}
			if !tc.summary(got.Summary) {
				t.Errorf("summary = %q", got.Summary)
			}
			s := reload(t, src)
			leaf, _ := leafEntry(s)
			if leaf.ID != got.EntryID || leaf.ParentID != ids[8] {
				t.Errorf("leaf %s under %s", leaf.ID, leaf.ParentID)
			}
			wantLine := `"summary":` + string(jsonl.AppendString(nil, got.Summary)) + `,"firstKeptEntryId":"` + ids[5] +
				`","tokensBefore":20,"details":{"readFiles":[],"modifiedFiles":["parse.go"]},"fromHook":false}`
			if !strings.HasSuffix(string(leaf.Raw), wantLine) {
				t.Errorf("entry = %s", leaf.Raw)
			}
			ctx := s.Context()
			if r := ctxRaws(ctx); !strings.Contains(r[0], `"role":"compactionSummary"`) || len(r) != 5 {
				t.Errorf("context after compaction: %d messages, first %s", len(r), r[0])
			}
			// Compacting again right away is refused, like pi.
			if _, errOut, code := mutRun(t, "", "compact", src); code != exitFailure || !strings.Contains(errOut, "already compacted") {
				t.Errorf("second compaction: exit %d, %s", code, errOut)
			}
		})
	}
	t.Run("dry run", func(t *testing.T) {
		src, ids := mutSession(t, cwd)
		before := mustRead(t, src)
		out, errOut, code := mutRun(t, "", "compact", "--dry-run", "--json", "--keep-tokens", "30", "--instructions", "be brief", src)
		if code != 0 || mustRead(t, src) != before {
			t.Fatalf("exit %d (%s) or the file changed", code, errOut)
		}
		var got struct {
			EntryID          *string
			FirstKeptEntryID string
			Requests         []struct {
				Kind, Prompt string
				MaxTokens    int
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.EntryID != nil || got.FirstKeptEntryID != ids[5] || len(got.Requests) != 1 || got.Requests[0].Kind != "history" ||
			got.Requests[0].MaxTokens != 0 || !strings.HasSuffix(got.Requests[0].Prompt, "Additional focus: be brief") {
			t.Errorf("dry run = %+v", got)
		}
		out, _, code = mutRun(t, "", "compact", "--dry-run", "--keep-tokens", "30", src)
		if code != 0 || !strings.Contains(out, "first kept:     "+ids[5]+" (user message)") || !strings.Contains(out, "modified files: parse.go") {
			t.Errorf("human dry run:\n%s", out)
		}
	})
	t.Run("settings from the agent directory", func(t *testing.T) {
		src, ids := mutSession(t, cwd)
		if err := os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"compaction":{"keepRecentTokens":30}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(agent, "settings.json"))
		out, _, code := mutRun(t, "", "compact", "--dry-run", "--json", src)
		if code != 0 || !strings.Contains(out, `"firstKeptEntryId":"`+ids[5]+`"`) || !strings.Contains(out, `"keepRecentTokens":30`) {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("locked", func(t *testing.T) {
		src, _ := mutSession(t, cwd)
		holdLock(t, src)
		if _, errOut, code := mutRun(t, "", "compact", src); code != exitLocked || !strings.Contains(errOut, ".lock: ") {
			t.Fatalf("exit %d, %s", code, errOut)
		}
	})
	t.Run("nothing before the cut with the default settings", func(t *testing.T) {
		// The whole session fits in the 20000 tokens pi keeps: no
		// message to summarise, and pi 1.6.0 prepares nothing (0.73.1
		// would have put a placeholder summary into the context).
		src, _ := mutSession(t, cwd)
		before := mustRead(t, src)
		want := "sessctl: compact: nothing to compact (session too small): keeping about 20000 tokens, no message comes before the cut"
		for _, extra := range [][]string{nil, {"--dry-run", "--json"}} {
			out, errOut, code := mutRun(t, "", append([]string{"compact", src}, extra...)...)
			if code != exitFailure || !strings.HasPrefix(errOut, want+"\nhint: ") || out != "" || mustRead(t, src) != before {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q, the file unchanged", extra, code, out, errOut, exitFailure, want)
			}
		}
	})
	t.Run("too small", func(t *testing.T) {
		path := writeSession(t, t.TempDir(), []string{eLine("a", "", `{"role":"user","content":"hi","timestamp":1}`)})
		if _, errOut, code := mutRun(t, "", "compact", path); code != exitFailure || !strings.Contains(errOut, "nothing to compact") {
			t.Fatalf("exit %d, %s", code, errOut)
		}
	})
	t.Run("human output", func(t *testing.T) {
		src, ids := mutSession(t, cwd)
		out, _, code := mutRun(t, "", "compact", src, "--keep-tokens", "30")
		for _, want := range []string{"compacted ", "first kept:     " + ids[5], "tokens before:  20", "summary:        offline", "modified files: parse.go"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
}

func TestLabelNameDelete(t *testing.T) {
	agent, cwd := mutStore(t)
	src, ids := mutSession(t, cwd)
	srcID := reload(t, src).SessionID()

	steps := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		check    func(t *testing.T, s *engine.Session)
		// unchanged: the command must leave the file byte for byte
		unchanged bool
	}{
		{name: "set a label", args: []string{"label", srcID, ids[3], "before tests"},
			check: func(t *testing.T, s *engine.Session) {
				if l, _ := s.Label(ids[3]); l != "before tests" {
					t.Errorf("label = %q", l)
				}
			}},
		{name: "label JSON", args: []string{"label", "--json", srcID, ids[2][:6], "-x-", "--"}, wantCode: exitUsage},
		{name: "label text after --", args: []string{"label", "--json", srcID, ids[2][:6], "--", "-x-"},
			wantOut: `"targetId":"` + ids[2] + `","label":"-x-"}`},
		{name: "show a label", args: []string{"label", srcID, ids[3]}, wantOut: "before tests\n", unchanged: true},
		{name: "show a label as JSON", args: []string{"label", srcID, ids[3][:5], "--json"},
			wantOut: `{"targetId":"` + ids[3] + `","label":"before tests"}`, unchanged: true},
		{name: "show a missing label", args: []string{"label", srcID, ids[4], "--json"},
			wantOut: `{"targetId":"` + ids[4] + `","label":null}`, unchanged: true},
		{name: "an empty label is refused", args: []string{"label", srcID, ids[3], ""}, wantCode: exitUsage, unchanged: true},
		{name: "--clear with a text is refused", args: []string{"label", srcID, ids[3], "x", "--clear"}, wantCode: exitUsage, unchanged: true},
		{name: "clear a label", args: []string{"label", srcID, ids[3], "--clear", "--json"},
			wantOut: `"targetId":"` + ids[3] + `","label":null}`,
			check: func(t *testing.T, s *engine.Session) {
				if l, ok := s.Label(ids[3]); ok {
					t.Errorf("label still %q", l)
				}
			}},
		{name: "clear a label that is not there", args: []string{"label", srcID, ids[3], "--clear", "--json"},
			wantOut: `{"entryId":null,"targetId":"` + ids[3] + `","label":null}`, unchanged: true},
		{name: "label an unknown entry", args: []string{"label", srcID, "zzzzzzzz", "x"}, wantCode: exitNotFound},
		{name: "no name yet", args: []string{"name", "--json", srcID}, wantOut: `{"name":null}`},
		{name: "set the name", args: []string{"name", srcID, "  parser work  "},
			check: func(t *testing.T, s *engine.Session) {
				if n, _ := s.Name(); n != "parser work" {
					t.Errorf("name = %q", n)
				}
			}},
		{name: "print the name", args: []string{"name", srcID}, wantOut: "parser work\n"},
		{name: "an empty name clears it", args: []string{"name", "--json", srcID, "  "}, wantOut: `{"name":null,"entryId":`,
			check: func(t *testing.T, s *engine.Session) {
				if n, ok := s.Name(); ok {
					t.Errorf("name = %q, want none", n)
				}
			}},
		{name: "no name after clearing", args: []string{"name", "--json", srcID}, wantOut: `{"name":null}`},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := mustRead(t, src)
			out, errOut, code := mutRun(t, "", st.args...)
			if code != st.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, st.wantCode, errOut)
			}
			if st.unchanged && mustRead(t, src) != before {
				t.Errorf("the session changed:\n%s", mustRead(t, src)[len(before):])
			}
			if st.wantOut != "" && !strings.HasSuffix(out, st.wantOut+"\n") && !strings.HasPrefix(out, st.wantOut) && out != st.wantOut {
				t.Errorf("stdout %q, want %q", out, st.wantOut)
			}
			if st.check != nil {
				st.check(t, reload(t, src))
			}
		})
	}

	t.Run("delete refuses while locked, then moves to the trash", func(t *testing.T) {
		w, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(t.Context(), src, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, errOut, code := mutRun(t, "", "delete", srcID)
		w.Close()
		if code != exitLocked || !strings.Contains(errOut, ".lock: ") || !strings.Contains(errOut, "hint:") {
			t.Fatalf("exit %d, %s", code, errOut)
		}
		for _, f := range []string{src + ".v2.bak", src + ".v2.bak.1", src + ".tmp-00112233aabbccdd"} {
			if err := os.WriteFile(f, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out, errOut, code := mutRun(t, "", "delete", "--json", srcID)
		if code != 0 {
			t.Fatalf("exit %d, %s", code, errOut)
		}
		var got struct {
			Trash string
			Moved []struct{ From, To string }
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		sessions := layout.SessionsDir(agent)
		rel, _ := filepath.Rel(sessions, filepath.Dir(src))
		if filepath.Dir(filepath.Dir(got.Trash)) != filepath.Join(sessions, ".trash") || filepath.Base(got.Trash) != rel || len(got.Moved) != 4 {
			t.Errorf("delete = %+v", got)
		}
		for _, m := range got.Moved {
			if _, err := os.Stat(m.To); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(m.From); err == nil {
				t.Errorf("%s is still there", m.From)
			}
		}
		// Everything of the session went: its lock file too.
		if _, err := os.Stat(src + ".lock"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the lock file should be gone: %v", err)
		}
		left, _ := filepath.Glob(src + "*")
		if len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
		// The trashed session is no longer found by id.
		if _, _, code := mutRun(t, "", "name", srcID); code != exitNotFound {
			t.Errorf("name of a deleted session: exit %d", code)
		}
	})
}

func TestMutatingCommandsHelp(t *testing.T) {
	for _, name := range []string{"fork", "branch", "compact", "label", "name", "delete"} {
		t.Run(name, func(t *testing.T) {
			out, _, code := mutRun(t, "", "help", name)
			if code != 0 || !strings.Contains(out, "Usage: sessctl "+name) || !strings.Contains(out, "Examples:") || !strings.Contains(out, "Flags:") {
				t.Errorf("exit %d:\n%s", code, out)
			}
			if name != "fork" && !strings.Contains(out, "-wait") {
				t.Errorf("no --wait flag:\n%s", out)
			}
			_, errOut, code := mutRun(t, "", name, "--no-such-flag")
			if code != exitUsage || !strings.Contains(errOut, "hint:") {
				t.Errorf("bad flag: exit %d, %s", code, errOut)
			}
		})
	}
}

// TestParseInterspersed checks the one parser of every command: flags
// before, between and after positional arguments, a value flag that
// takes the next argument even when it starts with '-', bool flags that
// take none, "--" ending the flags and a lone "-" as a positional.
func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args []string
		pos  []string
		at   string
		all  bool
	}{
		{[]string{"S", "--at", "x"}, []string{"S"}, "x", false},
		{[]string{"--at", "x", "S", "T"}, []string{"S", "T"}, "x", false},
		{[]string{"S", "--all", "T"}, []string{"S", "T"}, "", true},
		{[]string{"S", "--at=-y", "--all=false", "T"}, []string{"S", "T"}, "-y", false},
		{[]string{"S", "-at", "-z"}, []string{"S"}, "-z", false},
		{[]string{"S", "--at", "--", "T"}, []string{"S", "T"}, "--", false},
		{[]string{"S", "--", "-t", "--all"}, []string{"S", "-t", "--all"}, "", false},
		{[]string{"--", "-S"}, []string{"-S"}, "", false},
		{[]string{"S", "-", "--at=y"}, []string{"S", "-"}, "y", false},
		{[]string{"S", "--at", "x", "--", "--at", "y"}, []string{"S", "--at", "y"}, "x", false},
	}
	for _, tc := range tests {
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, name: "fork"}
		fs := e.flags(forkCommand)
		at := fs.String("at", "", "")
		all := fs.Bool("all", false, "")
		code := e.parse(forkCommand, fs, tc.args)
		if pos := fs.Args(); code >= 0 || !cmp.Equal(pos, tc.pos) || *at != tc.at || *all != tc.all {
			t.Errorf("parse(%q) = %q, %d, at %q, all %v; want %q, at %q, all %v", tc.args, pos, code, *at, *all, tc.pos, tc.at, tc.all)
		}
	}
	for _, args := range [][]string{{"S", "--at"}, {"S", "--nosuch", "x"}, {"S", "---at", "x"}} {
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, name: "fork"}
		fs := e.flags(forkCommand)
		fs.String("at", "", "")
		if code := e.parse(forkCommand, fs, args); code != exitUsage {
			t.Errorf("parse(%q) = %d, want the usage exit code %d", args, code, exitUsage)
		}
	}
}
