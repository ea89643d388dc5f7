package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// realCodexVersion is the Codex release TestRealCodex was written
// against; another one may be tried through SESSCTL_CODEX.
const realCodexVersion = "0.171.0"

// codexBinary returns the Codex CLI to run: $SESSCTL_CODEX, else the one
// scripts/codex-install.sh installs into ~/.cache/sessctl/codex (never
// into the repository). Without it the test skips, or fails where
// SESSCTL_REQUIRE_CODEX=1 (CI).
func codexBinary(t *testing.T) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("SESSCTL_REQUIRE_CODEX") == "1" {
		skip = t.Fatalf
	}
	if p := os.Getenv("SESSCTL_CODEX"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		skip("no cache directory: %v", err)
	}
	p := filepath.Join(cache, "sessctl", "codex", "node_modules", ".bin", "codex")
	if _, err := os.Stat(p); err != nil {
		skip("the Codex CLI %s is not installed: run scripts/codex-install.sh (or set SESSCTL_CODEX)", realCodexVersion)
	}
	return p
}

// stubModel is a model server on loopback speaking the streamed OpenAI
// Responses API, enough for Codex: a prompt starting "RUN" gets a
// reasoning summary and an exec_command call; a tool output gets an
// answer quoting it; anything else an answer quoting the prompt.
func stubModel(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	var mu sync.Mutex
	n := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []map[string]any `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		var prompt string
		var last map[string]any
		for _, it := range req.Input {
			last = it
			if it["type"] == "message" && it["role"] == "user" {
				parts, _ := it["content"].([]any)
				for _, p := range parts {
					if s, _ := p.(map[string]any)["text"].(string); s != "" && !strings.HasPrefix(s, "<") {
						prompt = s
					}
				}
			}
		}
		var items []map[string]any
		answer := func(text string) map[string]any {
			return map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_stub%d", k),
				"content": []any{map[string]any{"type": "output_text", "text": text}}}
		}
		switch {
		case last["type"] == "function_call_output":
			out, _ := last["output"].(string)
			items = append(items, answer("The command printed:\n"+out))
		case strings.HasPrefix(prompt, "RUN"):
			items = append(items,
				map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_stub%d", k), "summary": []any{map[string]any{"type": "summary_text", "text": "I should run ls."}}},
				map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_stub%d", k), "call_id": fmt.Sprintf("call_stub%d", k), "name": "exec_command", "arguments": `{"cmd":"ls"}`})
		default:
			items = append(items, answer("You said: "+prompt))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		}
		id := fmt.Sprintf("resp_stub%d", k)
		event(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
		for _, it := range items {
			event(map[string]any{"type": "response.output_item.done", "item": it})
		}
		event(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 20},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 3}, "total_tokens": 110}}})
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/v1"
}

// TestRealCodex runs the real Codex CLI (when installed) against a stub
// model on loopback: a session with a shell tool call, a fork of it
// ('codex exec fork'), and a third run with Codex's compressor enabled
// after the first rollout was aged past a week, so that Codex itself
// compresses it to rollout-*.jsonl.zst. The import reads what Codex
// wrote: the compressed parent (to the same bytes as its plain form),
// and the fork as its child without the parent's history.
func TestRealCodex(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	url := stubModel(t)
	tmp := t.TempDir()
	home, proj := filepath.Join(tmp, "codex-home"), filepath.Join(tmp, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := `model = "stub-model"
model_provider = "stub"
[model_providers.stub]
name = "stub"
base_url = "` + url + `"
env_key = "SESSCTL_STUB_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	codex := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"exec", "--skip-git-repo-check", "-s", "danger-full-access"}, args...)...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+tmp, "SESSCTL_STUB_KEY=stub", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("codex %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	version := codex("--version")
	t.Logf("%s", strings.TrimSpace(version))

	codex("RUN: list the files")
	first, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(first) != 1 {
		t.Fatalf("rollouts after the first run: %v", first)
	}
	parent := fileID(first[0])
	codex("fork", parent, "now say bye")
	plain := first[0]
	original, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(plain, old, old); err != nil {
		t.Fatal(err)
	}
	codex("--enable", "local_thread_store_compression", "hello again")
	compressedByCodex := false
	for range 50 {
		if _, err := os.Stat(plain + ".zst"); err == nil {
			if _, err := os.Stat(plain); os.IsNotExist(err) {
				compressedByCodex = true
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !compressedByCodex {
		t.Logf("this Codex did not compress the aged rollout; compressing it as Codex does")
		var z bytes.Buffer
		enc, _ := zstd.NewWriter(&z, zstd.WithEncoderCRC(false))
		enc.Write(original)
		enc.Close()
		if err := os.WriteFile(plain+".zst", z.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(plain)
	}

	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, home, opts)
	if len(res.Damage) != 0 || len(res.Skipped) != 0 || len(res.Sessions) != 3 {
		t.Fatalf("%d sessions, damage %v, skipped %v", len(res.Sessions), res.Damage, res.Skipped)
	}
	p := res.ByID(t, parent)
	if p.Cwd != proj || !p.CwdKnown || p.SourcePath != plain || res.Refs[0].Path != plain+".zst" {
		t.Errorf("parent: cwd %q, source %s read from %s", p.Cwd, p.SourcePath, res.Refs[0].Path)
	}
	got := importtest.Load(t, p, "").Messages()
	if len(got) != 4 || got[0].Role != "user" || got[0].Text != "RUN: list the files" ||
		got[1].Role != "assistant" || len(got[1].ToolCalls) != 1 || got[2].Role != "toolResult" || !strings.Contains(got[2].Text, "a.txt") ||
		got[3].Role != "assistant" || !strings.Contains(got[3].Text, "The command printed") {
		t.Errorf("parent context %+v", got)
	}
	importtest.CheckToolPairs(t, "parent", got)

	var fork *migrate.Imported
	for _, s := range res.Sessions {
		if s.ParentSourceID == parent {
			fork = s
		}
	}
	if fork == nil {
		t.Fatal("no session names the first as its parent")
	}
	want := []importtest.Msg{{Role: "user", Text: "now say bye"}, {Role: "assistant", Text: "You said: now say bye"}}
	l := importtest.Load(t, fork, "/pi/parent.jsonl")
	if diff := cmp.Diff(want, l.Messages()); diff != "" {
		t.Errorf("fork context (-want +got):\n%s", diff)
	}
	if note := forkNote(t, l); note == nil || note["forkedFromId"] != parent {
		t.Errorf("fork entry %v", note)
	}

	// The compressed rollout imports to the bytes of its plain form.
	z, err := os.ReadFile(plain + ".zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	data, err := dec.DecodeAll(z, nil)
	if err != nil || !bytes.Equal(data, original) {
		t.Fatalf("Codex's .zst does not hold the rollout (%v)", err)
	}
	if err := os.Rename(plain+".zst", plain); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, data, 0o600); err != nil {
		t.Fatal(err)
	}
	again := importtest.Import(t, Source{}, home, opts)
	if got, want := again.ByID(t, parent).Bytes(""), p.Bytes(""); !bytes.Equal(got, want) {
		t.Errorf("the plain rollout imports to other bytes than its compressed form")
	}
}
