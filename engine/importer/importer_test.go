package importer_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/sources"
)

// run imports the store at path with src and returns what the Handler
// was told, one string per call.
func run(t *testing.T, im *importer.Importer, source, path string) (results []importer.Result, events []string) {
	t.Helper()
	src, ok := sources.ByName(source)
	if !ok {
		t.Fatalf("no source %s", source)
	}
	im.Store(context.Background(), src, path, importer.Handler{
		Session: func(r importer.Result) {
			results = append(results, r)
			events = append(events, "session "+r.Status)
		},
		Skip:   func(source string, sk *migrate.Skip) { events = append(events, "skip "+sk.Reason) },
		Damage: func(d *migrate.Damage) { events = append(events, "damage "+filepath.Base(d.Path)) },
		Fail:   func(err error) { events = append(events, "fail "+err.Error()) },
		Warn:   func(err error) { events = append(events, "warn "+err.Error()) },
	})
	return results, events
}

// TestImporterStatuses walks one session through every status: new,
// unchanged, updated (the source changed), the dry run of each, and kept
// once the session was continued in pi.
func TestImporterStatuses(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	store := filepath.Join(tmp, "cascade")
	conv := filepath.Join(store, "c1.json")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		data := `{"conversationId":"c1","cwd":"/w","createdAt":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"` + text + `"}]}`
		if err := os.WriteFile(conv, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	agentDir := filepath.Join(tmp, "pi")
	real := importer.New(importer.Options{AgentDir: agentDir})
	dry := importer.New(importer.Options{AgentDir: agentDir, DryRun: true})
	status := func(im *importer.Importer) string {
		t.Helper()
		rs, events := run(t, im, "windsurf", store)
		if len(rs) != 1 {
			t.Fatalf("results %+v, events %v", rs, events)
		}
		return rs[0].Status
	}

	write("one")
	if got := status(dry); got != importer.StatusNew {
		t.Errorf("dry run of a new session: %s", got)
	}
	rs, _ := run(t, real, "windsurf", store)
	if len(rs) != 1 || rs[0].Status != importer.StatusNew || rs[0].Err != nil {
		t.Fatalf("first import: %+v", rs)
	}
	file := rs[0].Path
	if filepath.Dir(filepath.Dir(file)) != filepath.Join(agentDir, "sessions") {
		t.Errorf("imported to %s, not under pi's sessions directory", file)
	}
	for _, im := range []*importer.Importer{dry, real} {
		if got := status(im); got != importer.StatusUnchanged {
			t.Errorf("import of the same source: %s", got)
		}
	}
	write("one, edited")
	if got := status(dry); got != importer.StatusUpdated {
		t.Errorf("dry run after the source changed: %s", got)
	}
	if got := status(real); got != importer.StatusUpdated {
		t.Errorf("import after the source changed: %s", got)
	}

	// pi continues the session: it appends to the imported file.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"message","id":"p1","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"more","timestamp":1}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, _ := os.ReadFile(file)
	write("one, edited again")
	for _, im := range []*importer.Importer{dry, real} {
		rs, _ := run(t, im, "windsurf", store)
		if len(rs) != 1 || rs[0].Status != importer.StatusKept || !errors.Is(rs[0].Err, migrate.ErrNotImported) {
			t.Errorf("import of a session continued in pi: %+v", rs)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("a session continued in pi was overwritten")
	}
}

// TestImporterEvents checks what the Handler hears of a damaged line and
// of a store that is not there.
func TestImporterEvents(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "claude", "projects", "-w", "s2.jsonl")
	testenv.WriteFile(t, file, testenv.Lines(
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s2","cwd":"/w","timestamp":"2026-02-01T00:00:00Z","message":{"role":"user","content":"first"}}`,
		`not a line of Claude Code's`,
		`{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s2","cwd":"/w","timestamp":"2026-02-01T00:00:02Z","message":{"role":"user","content":"second"}}`,
	))
	im := importer.New(importer.Options{AgentDir: filepath.Join(tmp, "pi")})
	_, events := run(t, im, "claude", filepath.Join(tmp, "claude"))
	if diff := cmp.Diff([]string{"damage s2.jsonl", "session new"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_, events = run(t, im, "claude", filepath.Join(tmp, "nowhere"))
	if len(events) != 1 || events[0][:5] != "fail " {
		t.Errorf("a missing store: events %v, want one failure", events)
	}
}

// TestImporterCodexFork: a Codex fork imported with its parent names the
// parent's file in its header (parentSession), and the parent's history
// it replays is in the parent's file only.
func TestImporterCodexFork(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	home := filepath.Join(tmp, "codex")
	const parent, child = "0196a1f0-0000-7000-8000-000000000001", "0196a6ee-8c00-7000-8000-000000000002"
	meta := func(id, extra string) string {
		return `"type":"session_meta","payload":{"id":"` + id + `"` + extra + `,"timestamp":"2026-05-01T08:00:00.000Z","cwd":"/w","cli_version":"0.140.0"}}`
	}
	prompt := `"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}}`
	answer := `"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.go"}]}}`
	testenv.WriteFile(t, filepath.Join(home, "sessions", "2026", "05", "01", "rollout-2026-05-01T10-00-00-"+parent+".jsonl"), testenv.Lines(
		`{"timestamp":"2026-05-01T08:00:00.000Z",`+meta(parent, ""),
		`{"timestamp":"2026-05-01T08:00:01.000Z",`+prompt,
		`{"timestamp":"2026-05-01T08:00:02.000Z",`+answer,
	))
	testenv.WriteFile(t, filepath.Join(home, "sessions", "2026", "05", "02", "rollout-2026-05-02T10-00-00-"+child+".jsonl"), testenv.Lines(
		`{"timestamp":"2026-05-02T08:00:00.000Z",`+meta(child, `,"forked_from_id":"`+parent+`"`),
		`{"timestamp":"2026-05-02T08:00:00.001Z",`+meta(parent, ""),
		`{"timestamp":"2026-05-02T08:00:00.002Z",`+prompt,
		`{"timestamp":"2026-05-02T08:00:00.003Z",`+answer,
		`{"timestamp":"2026-05-02T08:00:05.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"count lines"}]}}`,
	))
	im := importer.New(importer.Options{AgentDir: filepath.Join(tmp, "pi")})
	rs, events := run(t, im, "codex", home)
	if len(rs) != 2 || rs[0].Status != importer.StatusNew || rs[1].Status != importer.StatusNew {
		t.Fatalf("results %+v, events %v", rs, events)
	}
	if rs[0].Session.SourceID != parent || rs[1].Parent != rs[0].Path {
		t.Fatalf("fork's parent file %q, want %q", rs[1].Parent, rs[0].Path)
	}
	data, err := os.ReadFile(rs[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(data), "\n")
	if !strings.Contains(head, `"parentSession":"`+jsonEscape(rs[0].Path)+`"`) {
		t.Errorf("fork header %s does not name %s", head, rs[0].Path)
	}
	if strings.Contains(string(data), "list files") || !strings.Contains(string(data), "count lines") {
		t.Errorf("fork file holds the parent's prompt again, or lacks its own:\n%s", data)
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
