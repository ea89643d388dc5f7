package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/testenv"
)

// TestAgent runs the example agent and checks what it wrote: the main
// session with its compaction, branch summary, label and name, the child
// session naming it, and what the viewer saw; then, where the reference
// pi is installed, that pi loads both files with the same leaf, branch,
// name and context as sessctl.
func TestAgent(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	files, err := run(t.Context(), dir, &log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "viewer saw: user\nviewer saw: assistant\nviewer saw: toolResult\nviewer saw: assistant\n"; log.String() != want {
		t.Errorf("viewer saw:\n%s\nwant:\n%s", log.String(), want)
	}
	main, err := engine.OpenFile(t.Context(), files[0], engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	types := map[string]int{}
	for _, e := range main.Entries() {
		types[e.Type]++
	}
	for _, typ := range []string{"compaction", "branch_summary", "label", "session_info", "model_change", "thinking_level_change"} {
		if types[typ] != 1 {
			t.Errorf("%d %s entries, want 1 (%v)", types[typ], typ, types)
		}
	}
	child, err := engine.OpenFile(t.Context(), files[1], engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	if h := child.Header(); h.ParentSession != files[0] {
		t.Errorf("child's parentSession %q, want %q", h.ParentSession, files[0])
	}

	node, modules := testenv.Pi(t)
	script := filepath.Join(testenv.RepoRoot(t), "scripts", "pi-state.mjs")
	for _, f := range files {
		out, err := exec.Command(node, script, modules, f).Output()
		if err != nil {
			t.Fatalf("pi-state %s: %v", f, err)
		}
		var pi map[string]any
		if err := json.Unmarshal(out, &pi); err != nil {
			t.Fatal(err)
		}
		s, err := engine.OpenFile(t.Context(), f, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = render.State(&buf, s, render.StateOptions{Fields: map[string]bool{"leafId": true, "branch": true, "entries": true, "sessionName": true, "context": true}})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		var ours map[string]any
		if err := json.Unmarshal(buf.Bytes(), &ours); err != nil {
			t.Fatal(err)
		}
		got := map[string]any{"leafId": ours["leafId"], "branch": ours["branch"], "entries": float64(len(ours["entries"].([]any))),
			"name": ours["sessionName"], "context": ours["context"]}
		want := map[string]any{"leafId": pi["leafId"], "branch": pi["branch"], "entries": pi["entries"], "name": pi["name"], "context": pi["context"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: pi and sessctl disagree (-pi +sessctl):\n%s", strings.TrimPrefix(f, dir), diff)
		}
	}
}
