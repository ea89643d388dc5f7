package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// TestHistory imports testdata/history with and without
// ImportOptions.History.
func TestHistory(t *testing.T) {
	t.Parallel()
	home := filepath.Join("testdata", "history", "claude-home")
	hist, _ := filepath.Abs(filepath.Join(home, "history.jsonl"))

	// Off by default: the transcript only, history.jsonl not even read
	// for damage.
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Sessions) != 1 || len(res.Damage) != 0 || len(res.Skipped) != 0 {
		t.Fatalf("without History: %d sessions, damage %v, skipped %v", len(res.Sessions), res.Damage, res.Skipped)
	}
	if res.Sessions[0].PromptOnly {
		t.Error("a transcript marked prompt-only")
	}

	opts := migrate.ImportOptions{History: true, Cwd: "/fallback"}
	res = importtest.Import(t, Source{}, home, opts)
	if len(res.Damage) != 1 || res.Damage[0].Path != hist || res.Damage[0].Line != 7 {
		t.Errorf("damage %v", res.Damage)
	}
	wantSkip := []*migrate.Skip{{SourceID: "history.jsonl", Path: hist, Reason: "1 prompt names no session (written before Claude Code recorded sessionId)"}}
	if diff := cmp.Diff(wantSkip, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	var ids []string
	for _, s := range res.Sessions {
		ids = append(ids, s.SourceID)
	}
	if diff := cmp.Diff([]string{"5b1d2c3e-0a9f-4e8d-b7c6-a5f4e3d2c1b0", "c0ffee00-1111-4222-8333-444455556666", "d00dfeed-2222-4333-8444-555566667777"}, ids); diff != "" {
		t.Fatalf("sessions (-want +got):\n%s", diff)
	}
	if res.Sessions[0].PromptOnly {
		t.Error("the session with a transcript was taken from the history")
	}
	c := res.ByID(t, "c0ffee00-1111-4222-8333-444455556666")
	if !c.PromptOnly || c.Cwd != "/home/user/app" || !c.CwdKnown || c.SourcePath != hist ||
		c.Start.UTC().Format("2006-01-02T15:04:05Z") != "2026-03-02T09:00:00Z" {
		t.Errorf("prompt-only session: %+v", c)
	}
	got := importtest.Load(t, c, "").Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "why does this fail? panic: runtime error\ngoroutine 1 [running]:\nmain.main()\n\tmain.go:12"},
		{Role: "custom", Text: "/compact", CustomType: "claude-command"},
		{Role: "user", Text: "and now? [Pasted text #2 +9 lines]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompt-only session (-want +got):\n%s", diff)
	}
	if f := string(c.Bytes("")); !strings.Contains(f, `"promptOnly":true`) || !strings.Contains(f, `"sourcePath":`+string(jsonString(hist))) {
		t.Errorf("provenance:\n%s", f)
	}
	if d := res.ByID(t, "d00dfeed-2222-4333-8444-555566667777"); d.Cwd != "/home/user/other" || !d.PromptOnly {
		t.Errorf("session of a vanished project: cwd %q", d.Cwd)
	}
	importtest.CheckReimport(t, Source{}, home, opts, res)

	// One project directory of the store: only its sessions' history.
	res = importtest.Import(t, Source{}, filepath.Join(home, "projects", "-home-user-app"), opts)
	ids = nil
	for _, s := range res.Sessions {
		ids = append(ids, s.SourceID)
	}
	if diff := cmp.Diff([]string{"5b1d2c3e-0a9f-4e8d-b7c6-a5f4e3d2c1b0", "c0ffee00-1111-4222-8333-444455556666"}, ids); diff != "" {
		t.Errorf("one project (-want +got):\n%s", diff)
	}
}

// TestHistoryCorpus: the real history.jsonl of the corpus lists one
// session whose transcript is not there.
func TestHistoryCorpus(t *testing.T) {
	t.Parallel()
	home := filepath.Join(importtest.Corpus(t, "claude"), "flat-subagents-2.0.76", "claude-home")
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{History: true})
	var prompt []*migrate.Imported
	for _, s := range res.Sessions {
		if s.PromptOnly {
			prompt = append(prompt, s)
		}
	}
	if len(prompt) != 1 || prompt[0].SourceID != "f9e5041e-ce2a-470d-a9b7-66cdf424ffcf" || prompt[0].Cwd != `C:\WINDOWS\system32` {
		t.Fatalf("prompt-only sessions: %v", prompt)
	}
	got := importtest.Load(t, prompt[0], "").Messages()
	if len(got) != 1 || got[0].Role != "user" || !strings.HasPrefix(got[0].Text, "GOSPEL CHECK.") ||
		!strings.HasSuffix(got[0].Text, " you were doing this started any way i closed cmd terminal out by accident miss click ><") {
		t.Errorf("context %+v", got)
	}
}

// jsonString is s as a JSON string (a Windows path's backslashes escaped).
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
