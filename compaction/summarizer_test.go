package compaction

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
)

func sampleRequest(t *testing.T) Request {
	t.Helper()
	var b pathBuilder
	b.userText("please fix the parser").asst(20, 0, call{"read", "parse.go"}).tool(5).
		asst(20, 0, call{"edit", "parse.go"}).tool(1).userText("now add tests").asst(10, 0)
	p, err := Prepare(b.path(t), settingsKeep(1))
	if err != nil {
		t.Fatal(err)
	}
	return *p.History
}

func TestFixed(t *testing.T) {
	t.Parallel()
	got, err := Fixed("S").Summarize(t.Context(), Request{})
	if err != nil || got != "S" {
		t.Fatalf("Fixed = %q, %v", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Fixed("S").Summarize(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fixed on a cancelled context = %v", err)
	}
}

func needSh(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
}

func TestCommand(t *testing.T) {
	t.Parallel()
	needSh(t)
	req := sampleRequest(t)
	tests := []struct {
		name    string
		script  string
		json    bool
		want    string
		wantErr string
	}{
		{name: "prompt on stdin, stdout is the summary", script: `cat; printf '\n\n'`, want: req.Prompt},
		{name: "metadata in the environment", script: `printf '%s %s [%s]' "$SESSCTL_SUMMARY_KIND" "$SESSCTL_MAX_TOKENS" "$SESSCTL_REASONING"`, want: "history 0 []"},
		{name: "system prompt in the environment", script: `printf '%s' "$SESSCTL_SYSTEM_PROMPT"`, want: SystemPrompt},
		{name: "JSON request on stdin", script: `cat`, json: true, want: string(RequestJSON(req))},
		{name: "non-zero exit carries stderr", script: `echo 'model not found' >&2; exit 3`, wantErr: "exit status 3: model not found"},
		{name: "no output is an error", script: `printf '  \n'`, wantErr: "printed no summary"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &Command{Path: "sh", Args: []string{"-c", tc.script}, JSON: tc.json}
			got, err := c.Summarize(t.Context(), req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestJSON(t *testing.T) {
	t.Parallel()
	req := Request{Kind: KindBranch, SystemPrompt: "s", Prompt: "p<&>", MaxTokens: 2048, ConversationText: "c",
		CustomInstructions: "focus", ReplaceInstructions: true, Messages: msgs(`{"role":"user","content":"x"}`)}
	want := `{"kind":"branch","systemPrompt":"s","prompt":"p<&>","maxTokens":2048,"reasoning":null,"conversationText":"c","previousSummary":null,"customInstructions":"focus","replaceInstructions":true,"messages":[{"role":"user","content":"x"}]}`
	got := RequestJSON(req)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !jsonl.Valid(got) {
		t.Errorf("not valid JSON")
	}
}

func TestCommandCancelKillsIt(t *testing.T) {
	t.Parallel()
	needSh(t)
	started := filepath.Join(t.TempDir(), "started")
	// The shell starts a child that outlives a plain kill of the shell;
	// cancelling must still end Summarize (the process group is killed).
	c := &Command{Path: "sh", Args: []string{"-c", `touch "$0"; sleep 600; echo late`, started}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Summarize(ctx, Request{Prompt: "x"})
		done <- err
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("command ended before it was cancelled: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Summarize after cancel = %v, want context.Canceled", err)
	}
}

// TestCommandLimits checks the timeout and the output bound: a program
// that runs too long or prints too much is killed, its whole process
// group with it, and Summarize fails with the matching error.
func TestCommandLimits(t *testing.T) {
	t.Parallel()
	needSh(t)
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		max     int64
		want    string
		wantErr error
	}{
		// (The pid files are written whole, by a rename: a command killed
		// between creating and writing one left it empty.)
		{name: "too slow", script: `sleep 600 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; wait`, timeout: 200 * time.Millisecond, wantErr: ErrCommandTimeout},
		{name: "endless output", script: `echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; yes`, max: 1000, wantErr: ErrOutputTooLarge},
		{name: "endless output, default bound", script: `echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; yes`, wantErr: ErrOutputTooLarge},
		{name: "output one byte over", script: `printf abcd`, max: 3, wantErr: ErrOutputTooLarge},
		{name: "output at the bound", script: `printf abc`, max: 3, want: "abc"},
		{name: "no bound", script: `yes | head -c 5000000`, max: -1, want: strings.Repeat("y\n", 2500000)[:4999999]},
		{name: "fast enough", script: `printf ok`, timeout: time.Hour, want: "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			c := &Command{Path: "sh", Args: []string{"-c", tc.script, pidFile}, Timeout: tc.timeout, MaxOutput: tc.max}
			got, err := c.Summarize(t.Context(), Request{Prompt: "x"})
			if tc.wantErr == nil {
				if err != nil || got != tc.want {
					t.Fatalf("Summarize = %.40q, %v; want %.40q", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Summarize = %.40q, %v; want an error matching %v", got, err, tc.wantErr)
			}
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Errorf("error %v matches a context error: the caller's context was not cancelled", err)
			}
			if data, rerr := os.ReadFile(pidFile); rerr == nil {
				waitGone(t, strings.TrimSpace(string(data)))
			}
		})
	}
}

// TestCommandLeavesNothing checks that a program's children are killed
// when it exits, and that a child that still holds its output (or
// standard error) does not make Summarize fail or wait for it: the
// summary is what the program printed before it exited.
func TestCommandLeavesNothing(t *testing.T) {
	t.Parallel()
	needSh(t)
	tests := []struct {
		name   string
		script string
	}{
		{"background child holds stdout", `sleep 1000 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; echo done`},
		{"background child holds stderr", `sleep 1000 > /dev/null & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; echo done`},
		{"background child holds nothing", `sleep 1000 > /dev/null 2>&1 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; echo done`},
		{"child reads the prompt", `(sleep 1000; cat > /dev/null) <&0 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; echo done`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			c := &Command{Path: "sh", Args: []string{"-c", tc.script, pidFile}}
			got, err := c.Summarize(t.Context(), Request{Prompt: strings.Repeat("x", 1<<20)})
			if err != nil || got != "done" {
				t.Errorf("Summarize = %q, %v; want \"done\"", got, err)
			}
			data, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			waitGone(t, strings.TrimSpace(string(data)))
		})
	}
}

// TestCommandNotText checks that output with a NUL byte or invalid UTF-8
// is refused: it would be written into the session as a summary.
func TestCommandNotText(t *testing.T) {
	t.Parallel()
	needSh(t)
	tests := []struct {
		script, wantErr string
	}{
		{`printf 'a summary\000with a NUL'`, "a NUL byte at byte 9"},
		{`printf 'caf\351 latin-1'`, "invalid UTF-8 at byte 3"},
	}
	for _, tc := range tests {
		c := &Command{Path: "sh", Args: []string{"-c", tc.script}}
		got, err := c.Summarize(t.Context(), Request{Prompt: "x"})
		if err == nil || !strings.Contains(err.Error(), "is not text: "+tc.wantErr) {
			t.Errorf("%s: Summarize = %q, %v; want an error with %q", tc.script, got, err, tc.wantErr)
		}
	}
}

func TestOffline(t *testing.T) {
	t.Parallel()
	req := sampleRequest(t)
	s1, err := Offline{}.Summarize(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Offline{}.Summarize(t.Context(), req)
	if s1 != s2 {
		t.Fatalf("offline summary is not deterministic")
	}
	want := `## Goal
- please fix the parser

## Constraints & Preferences
(none recorded)

## Progress
### Done
- [x] 2 assistant replies, 2 tool calls (edit 1, read 1)
- [x] Modified: parse.go

### In Progress
- [ ] please fix the parser

### Blocked
(none)

## Key Decisions
(not recorded: sessctl wrote this summary offline, without a model)

## Next Steps
1. Continue with the latest request: please fix the parser

## Critical Context
- Last assistant message: ` + strings.Repeat("y", 57)
	if diff := cmp.Diff(want, s1); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOfflineKinds(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.userText("first task").asst(10, 0).
		compaction("## Goal\n- old goal\n\n<read-files>\nr.ts\n</read-files>", "e0", `{"readFiles":["r.ts"],"modifiedFiles":[]}`, false).
		userText("second task").asst(10, 0).userText("third task").asst(30, 0, call{"read", "a.go"}).tool(10).asst(30, 0, call{"write", "b.go"}).tool(10).asst(10, 0)
	p, err := Prepare(b.path(t), settingsKeep(12))
	if err != nil {
		t.Fatal(err)
	}
	if p.History == nil || p.TurnPrefix == nil {
		t.Fatalf("want a split turn with both requests, got %+v", summarize(p))
	}
	res, err := Compact(t.Context(), p, Offline{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Original Request\nthird task",
		"## Goal\n- first task\n- second task\n", // the first compaction kept "first task": it is in the window again
		"## Context for Suffix\n",
		"## Earlier Summary\n> ## Goal\n> - old goal",
		SplitTurnSeparator,
		"<read-files>\na.go\nr.ts\n</read-files>",
		"<modified-files>\nb.go\n</modified-files>",
	} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Summary)
		}
	}
	if strings.Contains(res.Summary, "> <read-files>") {
		t.Errorf("earlier file lists were not stripped:\n%s", res.Summary)
	}
	branch, err := Offline{}.Summarize(t.Context(), Request{Kind: KindBranch, Messages: p.TurnPrefixMessages})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(branch, "Critical Context") || !strings.Contains(branch, "## Next Steps") {
		t.Errorf("branch summary:\n%s", branch)
	}
}

func TestSummaryText(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"the summary\n\n", "the summary", ""},
		{"  kept leading space \t\r\n", "  kept leading space", ""},
		{"a \uFFFD replacement character is text", "a \uFFFD replacement character is text", ""},
		{"nul\x00here", "", "not text: a NUL byte at byte 3"},
		{"bad \xff byte", "", "not text: invalid UTF-8 at byte 4"},
	} {
		got, err := SummaryText([]byte(tc.in))
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("SummaryText(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
