package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// contextOf is 'sessctl context SESSION' decoded.
func contextOf(t *testing.T, file string) map[string]any {
	t.Helper()
	out, errOut, code := mutRun(t, "", "context", file)
	if code != exitOK {
		t.Fatalf("context: exit %d: %s", code, errOut)
	}
	var ctx map[string]any
	if err := json.Unmarshal([]byte(out), &ctx); err != nil {
		t.Fatalf("context output %q: %v", out, err)
	}
	return ctx
}

// TestContextEdit: --replace gives the model the text in place of a tool
// result's content, --omit leaves a message out; the entries stay, pi's
// refusals are refused, and the flags are checked.
func TestContextEdit(t *testing.T) {
	_, cwd := mutStore(t)
	file, ids := mutSession(t, cwd)
	before := len(contextOf(t, file)["messages"].([]any))

	out, errOut, code := mutRun(t, "", "context-edit", file, ids[2], "--replace", "[4000 bytes removed]", "--json")
	if code != exitOK {
		t.Fatalf("replace: exit %d: %s", code, errOut)
	}
	var res struct{ EntryID, TargetID, Replacement string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.TargetID != ids[2] || res.Replacement != "[4000 bytes removed]" || res.EntryID == "" {
		t.Fatalf("replace printed %q (%v)", out, err)
	}
	if _, errOut, code := mutRun(t, "", "context-edit", file, ids[3], "--omit"); code != exitOK {
		t.Fatalf("omit: exit %d: %s", code, errOut)
	}
	msgs := contextOf(t, file)["messages"].([]any)
	if len(msgs) != before-1 {
		t.Fatalf("context has %d messages after one omission, had %d", len(msgs), before)
	}
	tool, _ := json.Marshal(msgs[2])
	if want := `"content":[{"text":"[4000 bytes removed]","type":"text"}]`; !strings.Contains(string(tool), want) || !strings.Contains(string(tool), `"role":"toolResult"`) {
		t.Errorf("the edited tool result in the context: %s, want its content %s", tool, want)
	}
	for _, m := range msgs {
		if b, _ := json.Marshal(m); strings.Contains(string(b), "Fixing.") {
			t.Errorf("the omitted message is still in the context: %s", b)
		}
	}
	// show says which messages are edited, and shows the edits.
	out, errOut, code = mutRun(t, "", "show", file)
	for _, want := range []string{
		"(replaced in the model context by " + res.EntryID + ")",
		"(omitted from the model context by ",
		"-- context edit: " + ids[2] + " replaced in the model context [" + res.EntryID + "]",
		"-- context edit: " + ids[3] + " omitted from the model context [",
		"Fixing.", // the omitted message is still shown
	} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("show lacks %q (exit %d, %s):\n%s", want, code, errOut, out)
		}
	}
	// So do the exports, and the context edits are notes there.
	for _, format := range []string{"md", "html"} {
		out, errOut, code := mutRun(t, "", "export", file, "--format", format)
		for _, want := range []string{"replaced in the model context by ", "omitted from the model context by ", "Context edit: ", "Fixing."} {
			if code != exitOK || !strings.Contains(out, want) {
				t.Errorf("export --format %s lacks %q (exit %d, %s)", format, want, code, errOut)
			}
		}
	}
	// The history is unchanged: every entry is still there.
	s := reload(t, file)
	for _, id := range ids {
		if _, ok := s.Entry(id); !ok {
			t.Errorf("entry %s is gone", id)
		}
	}
	s.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"neither flag", []string{file, ids[0]}, exitUsage},
		{"both flags", []string{file, ids[0], "--omit", "--replace", "x"}, exitUsage},
		{"empty replacement", []string{file, ids[0], "--replace", ""}, exitUsage},
		{"unknown entry", []string{file, "ffffffff", "--omit"}, exitNotFound},
		{"a context edit is not editable", []string{file, res.EntryID, "--omit"}, exitFailure},
	} {
		if _, errOut, code := mutRun(t, "", append([]string{"context-edit"}, tc.args...)...); code != tc.code {
			t.Errorf("%s: exit %d, want %d: %s", tc.name, code, tc.code, errOut)
		}
	}
}

// TestContextEditLoadsInPi: pi loads a session sessctl context-edited with
// the edits applied: its context is sessctl's.
func TestContextEditLoadsInPi(t *testing.T) {
	node, modules := testenv.Pi(t)
	if strings.HasPrefix(testenv.PiInstalled(modules), "0.") {
		t.Skip("pi before 1.0 has no context edits")
	}
	_, cwd := mutStore(t)
	file, ids := mutSession(t, cwd)
	for _, args := range [][]string{{ids[2], "--replace", "[removed]"}, {ids[3], "--omit"}, {ids[0], "--replace", "fix parse.go"}} {
		if _, errOut, code := mutRun(t, "", append([]string{"context-edit", file}, args...)...); code != exitOK {
			t.Fatalf("context-edit %v: exit %d: %s", args, code, errOut)
		}
	}
	out, err := exec.Command(node, filepath.Join(testenv.RepoRoot(t), "scripts", "pi-state.mjs"), modules, file).Output()
	if err != nil {
		t.Fatalf("pi-state.mjs: %v", err)
	}
	var pi struct{ Context map[string]any }
	if err := json.Unmarshal(out, &pi); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(pi.Context["messages"])
	got, _ := json.Marshal(contextOf(t, file)["messages"])
	if string(want) != string(got) {
		t.Errorf("pi's context:\n%s\nsessctl's:\n%s", want, got)
	}
}
