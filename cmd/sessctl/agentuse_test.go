package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

// auCorpusProject copies project A of the AgentUse conformance corpus into
// the store of a fresh, non-git project directory and points
// XDG_DATA_HOME at it. It returns the project directory.
func auCorpusProject(t *testing.T) string {
	t.Helper()
	src := testenv.Corpus(t, "agentuse", "api-driven", "xdg-data", "agentuse", "project", "a451240a36c0c105", "session")
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layout.GitShowTopLevel(context.Background(), project); err == nil {
		t.Skip("the temporary directory is inside a git work tree")
	}
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dst := layout.AgentUseSessionRoot(data, layout.AgentUseProjectHash(project))
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return project
}

func runAU(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestAgentUseList(t *testing.T) {
	project := auCorpusProject(t)
	out, errOut, code := runAU(t, "list", "--agentuse", "--project", project, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var ids []string
	for _, x := range got {
		ids = append(ids, x["id"].(string))
	}
	want := []string{"01M7ZXJ0KC9S183XADC88B6B34", "01M7ZXJ0JJQGMSM3D6BY0DN83S", "01M7ZXJ0J0261ZRMRRXKE5RWPP",
		"01M7ZXJ0H8VSDF77BQYZNFSQ9Y", "01M7ZXJ0FRDFPJGYYVRCV1NP1V", "01M7ZXJ0ED68DDAAC8WA52HGC9", "01M7ZXJ093A1K5TPE8N7MS01CN"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("list order (-want +got):\n%s", diff)
	}
	orch := got[3]
	for k, v := range map[string]any{"agentId": "agents/orchestrator", "status": "suspended", "trigger": "manual",
		"created": float64(1795293774376), "children": []any{"01M7ZXJ0HEZJ29EGJY336AYQ1E"}, "parentSessionID": nil} {
		if diff := cmp.Diff(v, orch[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}

	out, _, code = runAU(t, "list", "--agentuse", "--project", project, "--subagents")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 11 || !strings.HasPrefix(lines[0], "CREATED") ||
		!strings.Contains(out, "01M7ZXJ0HEZJ  ") || !strings.Contains(out, "    reviewer") {
		t.Errorf("human list with subagents (exit %d):\n%s", code, out)
	}

	for _, args := range [][]string{
		{"list", "--agentuse", "--all"},
		{"list", "--project", project},
		{"list", "--subagents"},
	} {
		if _, errOut, code := runAU(t, args...); code != exitUsage || !strings.Contains(errOut, "hint:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}

	empty := t.TempDir()
	out, errOut, code = runAU(t, "list", "--agentuse", "--project", empty, "--json")
	if code != exitOK || out != "[]\n" {
		t.Errorf("empty store: exit %d, %q, %q", code, out, errOut)
	}
}

func TestAgentUseDump(t *testing.T) {
	project := auCorpusProject(t)
	out, errOut, code := runAU(t, "dump", "--store", "agentuse", "--project", project, "01m7zxj0frdf")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Format   string          `json:"format"`
		ID       string          `json:"id"`
		Session  json.RawMessage `json:"session"`
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			ID    string            `json:"id"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"messages"`
		Files    []string `json:"files"`
		Problems []any    `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.Format != "agentuse" || got.ID != "01M7ZXJ0FRDFPJGYYVRCV1NP1V" || len(got.Messages) != 1 ||
		len(got.Messages[0].Parts) != 3 || len(got.Files) != 7 || len(got.Problems) != 0 || string(got.Tools) == "null" {
		t.Errorf("dump:\n%s", out)
	}
	if !strings.HasPrefix(out, "{\n  \"format\": \"agentuse\",\n") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("dump is not 2-space JSON with a final newline:\n%s", out)
	}

	// A session directory works as the argument too.
	dir := filepath.Join(layout.AgentUseSessionRoot(os.Getenv("XDG_DATA_HOME"), layout.AgentUseProjectHash(project)),
		"01M7ZXJ0FRDFPJGYYVRCV1NP1V-agents-deployer")
	out2, _, code := runAU(t, "dump", dir)
	if code != exitOK || out2 != out {
		t.Errorf("dump by directory: exit %d, differs: %v", code, out2 != out)
	}

	cases := []struct {
		name string
		arg  string
		code int
	}{
		{"ambiguous", "01M7ZXJ0J", exitUsage},
		{"unknown", "01ZZ", exitNotFound},
		{"path-like", "../../etc", exitNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runAU(t, "dump", "--store", "agentuse", "--project", project, c.arg)
			if code != c.code || out != "" || !strings.Contains(errOut, "hint:") {
				t.Errorf("exit %d, want %d; stdout %q; stderr %q", code, c.code, out, errOut)
			}
		})
	}

	// A damaged part is reported on stderr, the rest is printed, exit 4.
	part := filepath.Join(filepath.Dir(dir), "01M7ZXJ0J0261ZRMRRXKE5RWPP-agents-flaky", "01M7ZXJ0J1NPVC5ABSGJD5K6E2",
		"part", "01M7ZXJ0J2JGGMEZPNSTJPK8EN.json")
	if err := os.WriteFile(part, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runAU(t, "dump", "--store", "agentuse", "--project", project, "01M7ZXJ0J02")
	if code != exitCorrupt || !strings.Contains(errOut, part) || !strings.Contains(out, `"problems": [`) ||
		strings.Count(out, `"type": "tool"`) != 1 {
		t.Errorf("damaged part: exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
}

// TestAgentUseTranscript checks the transcript the show command prints for
// an AgentUse session.
func TestAgentUseTranscript(t *testing.T) {
	project := auCorpusProject(t)
	var out, errOut bytes.Buffer
	e := &env{ctx: context.Background(), stdout: &out, stderr: &errOut, name: "show"}
	if code := runShowAgentUse(e, project, "01M7ZXJ093A1", false, false); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{
		"session 01M7ZXJ093A1K5TPE8N7MS01CN  agents/manager (manager)  completed\n",
		"  children: 01M7ZXJ0B9NH7FQE1AXR815054\n",
		"[01M7ZXJ097NY] message  2026-11-21 20:42:54  5540 tokens (in 5200, out 340, reasoning 120, cache read 4000, write 800)\n",
		"  task: Coordinate a short research report.\n",
		"  user: focus on ULIDs\n",
		"  -> tools__bash {\"command\":\"ls docs\"}  completed\n",
		"     error: Path is outside allowed paths\n",
		"  == compaction (step): 182000 -> 24000 tokens\n",
		"     README.md\n     spec.md\n",
		"  == learning captured (auto): 2\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}

// TestIsAgentUseDir: a session directory, its store and a missing
// directory are told apart (what makes show and dump take a directory as
// an AgentUse session).
func TestIsAgentUseDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "01M7ZXJ0KC9S183XADC88B6A01-ag")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, layout.AgentUseSessionFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !isAgentUseDir(dir) || isAgentUseDir(root) || isAgentUseDir(filepath.Join(root, "nope")) {
		t.Errorf("isAgentUseDir: a session directory, its store and a missing directory are not told apart")
	}
}
