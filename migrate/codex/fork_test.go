package codex

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// The fork fixtures, built from the shapes Codex's recorder writes: a
// forked rollout's first line is its own session_meta naming the parent
// (forked_from_id); a legacy one then replays the parent's rollout item
// by item, every copy stamped with the time of the fork, before its own
// turns; a paginated one names the parent's history (history_base) and
// copies none of it.
const (
	parentID = "0196a1f0-0000-7000-8000-000000000001"
	childID  = "0196a6ee-8c00-7000-8000-000000000002"
	grandID  = "0196a7aa-0000-7000-8000-000000000003"
	pageID   = "0196a8bb-0000-7000-8000-000000000004"
)

func meta(id, extra string) string {
	return `{"id":"` + id + `"` + extra + `,"timestamp":"2026-05-01T08:00:00.000Z","cwd":"/work/p","originator":"codex_cli_rs","cli_version":"0.140.0","source":"cli","model_provider":"openai"}`
}

// parentLines are the parent's items, without timestamps: the session,
// one turn with a tool call, and a compaction.
var parentLines = [][2]string{
	{"session_meta", meta(parentID, "")},
	{"turn_context", `{"cwd":"/work/p","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.5","effort":"high","summary":"auto"}`},
	{"response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}`},
	{"response_item", `{"type":"reasoning","summary":[{"type":"summary_text","text":"run ls"}],"encrypted_content":"abc"}`},
	{"response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}`},
	{"event_msg", `{"type":"exec_command_end","call_id":"call_1","exit_code":0}`},
	{"response_item", `{"type":"function_call_output","call_id":"call_1","output":"a.go\n"}`},
	{"response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"One file: a.go"}]}`},
	{"event_msg", `{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"total_tokens":110}}}`},
	{"compacted", `{"message":"the parent's summary"}`},
}

// rolloutOf writes items as rollout lines, stamped from t on, a
// millisecond apart.
func rolloutOf(t time.Time, items [][2]string) string {
	var b strings.Builder
	for i, it := range items {
		ts := t.Add(time.Duration(i) * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
		b.WriteString(`{"timestamp":"` + ts + `","type":"` + it[0] + `","payload":` + it[1] + "}\n")
	}
	return b.String()
}

// copyOf returns items as a fork copies them: without the events the
// newer writer no longer keeps, with a child-scoped id on messages and
// "content":null on reasoning (third parties saw both).
func copyOf(items [][2]string, child string) [][2]string {
	var out [][2]string
	for _, it := range items {
		p := it[1]
		switch {
		case it[0] == "event_msg" && strings.Contains(p, "exec_command_end"):
			continue
		case strings.HasPrefix(p, `{"type":"message"`):
			p = `{"id":"msg_` + child + `_` + string(rune('a'+len(out))) + `",` + p[1:]
		case strings.HasPrefix(p, `{"type":"reasoning"`):
			p = p[:len(p)-1] + `,"content":null}`
		}
		out = append(out, [2]string{it[0], p})
	}
	return out
}

func userItem(text string) [2]string {
	return [2]string{"response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}`}
}

func answerItem(text string) [2]string {
	return [2]string{"response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + text + `"}]}`}
}

// forkHome writes the fork fixtures into a Codex home: the parent (which
// went on after the fork), a legacy fork of it, a legacy fork of the fork
// (whose replay nests the parent's), and a paginated fork. It returns the
// home and the rollouts by id.
func forkHome(t *testing.T) (string, map[string]string) {
	t.Helper()
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "05")
	files := map[string]string{
		parentID: filepath.Join(day, "01", "rollout-2026-05-01T10-00-00-"+parentID+".jsonl"),
		childID:  filepath.Join(day, "02", "rollout-2026-05-02T11-00-00-"+childID+".jsonl"),
		grandID:  filepath.Join(day, "03", "rollout-2026-05-03T11-00-00-"+grandID+".jsonl"),
		pageID:   filepath.Join(day, "04", "rollout-2026-05-04T11-00-00-"+pageID+".jsonl"),
	}
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	// The parent as it was when it was forked, then a turn it had after.
	later := append(append([][2]string(nil), parentLines...), userItem("parent goes on"), answerItem("parent answer"))
	writeFile(t, files[parentID], []byte(rolloutOf(t0, later)), time.Time{})

	childOwn := [][2]string{
		{"turn_context", `{"cwd":"/work/p","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.5","effort":"high","summary":"auto"}`},
		{"session_meta", meta(childID, `,"forked_from_id":"`+parentID+`"`)}, // repeated after the first turn_context
		userItem("now count lines"),
		answerItem("1 line"),
	}
	child := append([][2]string{{"session_meta", meta(childID, `,"forked_from_id":"`+parentID+`"`)}}, copyOf(parentLines, childID)...)
	child = append(child, childOwn...)
	writeFile(t, files[childID], []byte(rolloutOf(t0.Add(25*time.Hour), child)), time.Time{})

	// The grandchild replays the child's whole rollout, the child's own
	// replay of the parent inside it.
	grand := [][2]string{{"session_meta", meta(grandID, `,"forked_from_id":"`+childID+`"`)}}
	grand = append(grand, copyOf(child, grandID)...)
	grand = append(grand, userItem("grandchild question"), answerItem("grandchild answer"))
	writeFile(t, files[grandID], []byte(rolloutOf(t0.Add(49*time.Hour), grand)), time.Time{})

	page := [][2]string{
		{"session_meta", meta(pageID, `,"forked_from_id":"`+parentID+`","history_mode":"paginated","history_base":{"thread_id":"`+parentID+`","end_ordinal_exclusive":10,"end_byte_offset":2400}`)},
		userItem("paginated question"),
		answerItem("paginated answer"),
	}
	writeFile(t, files[pageID], []byte(rolloutOf(t0.Add(73*time.Hour), page)), time.Time{})
	return home, files
}

// forkNote returns the data of a session's codex-fork entry.
func forkNote(t *testing.T, l *importtest.Loaded) map[string]any {
	t.Helper()
	for _, e := range l.Entries {
		if ct, _ := e.StringField("customType"); ct == ForkType {
			data, _ := e.Field("data")
			var v map[string]any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return nil
}

// TestFork: a fork is imported as a child of its parent (its
// parentSourceId is the parent, so its header names the parent's file),
// and the replay of the parent's history a legacy fork starts with is not
// imported again: the child's context holds its own turns only, with the
// model the replay ended on. A fork of a fork drops the replay of both;
// a paginated fork copies nothing and loses nothing.
func TestFork(t *testing.T) {
	t.Parallel()
	home, files := forkHome(t)
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 0 || len(res.Skipped) != 0 || len(res.Sessions) != 4 {
		t.Fatalf("%d sessions, damage %v, skipped %v", len(res.Sessions), res.Damage, res.Skipped)
	}
	if got := []string{res.Sessions[0].SourceID, res.Sessions[1].SourceID}; got[0] != parentID || got[1] != childID {
		t.Errorf("order %v: the parent first", got)
	}
	cases := []struct {
		id, parent string
		want       []importtest.Msg
		note       map[string]any
	}{
		{childID, parentID,
			[]importtest.Msg{{Role: "user", Text: "now count lines"}, {Role: "assistant", Text: "1 line"}},
			map[string]any{"forkedFromId": parentID, "parentHistory": "parent", "replayedLines": 9.0, "firstLine": 2.0, "lastLine": 10.0}},
		{grandID, childID,
			[]importtest.Msg{{Role: "user", Text: "grandchild question"}, {Role: "assistant", Text: "grandchild answer"}},
			map[string]any{"forkedFromId": childID, "parentHistory": "parent", "replayedLines": 14.0, "firstLine": 2.0, "lastLine": 15.0}},
		{pageID, parentID,
			[]importtest.Msg{{Role: "user", Text: "paginated question"}, {Role: "assistant", Text: "paginated answer"}},
			map[string]any{"forkedFromId": parentID, "parentHistory": "referenced"}},
	}
	for _, c := range cases {
		s := res.ByID(t, c.id)
		if s.ParentSourceID != c.parent || s.SourcePath != files[c.id] {
			t.Errorf("%s: parent %q path %s", c.id, s.ParentSourceID, s.SourcePath)
		}
		if want := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC); !s.Start.Equal(want) {
			t.Errorf("%s: start %v, want its own session_meta's", c.id, s.Start)
		}
		l := importtest.Load(t, s, "/pi/parent.jsonl")
		if diff := cmp.Diff(c.want, l.Messages()); diff != "" {
			t.Errorf("%s: context (-want +got):\n%s", c.id, diff)
		}
		if diff := cmp.Diff(c.note, forkNote(t, l)); diff != "" {
			t.Errorf("%s: fork entry (-want +got):\n%s", c.id, diff)
		}
		if c.note["parentHistory"] == "parent" {
			if string(l.Context.Model) == "" || !strings.Contains(string(l.Context.Model), "gpt-5.5") || string(l.Context.ThinkingLevel) != `"high"` {
				t.Errorf("%s: model %s level %q, want the replay's gpt-5.5, high", c.id, l.Context.Model, l.Context.ThinkingLevel)
			}
		}
	}
	// The parent keeps all of its own history, the turn after the fork too.
	pm := importtest.Load(t, res.ByID(t, parentID), "").Messages()
	if len(pm) != 3 || pm[0].Role != "compactionSummary" || pm[1].Text != "parent goes on" {
		t.Errorf("parent context %+v", pm)
	}
	importtest.CheckReimport(t, Source{}, home, migrate.ImportOptions{}, res)
}

// TestForkParentMissing: when the parent's rollout is not in the store
// read (deleted, or a single rollout imported), the replay is the only
// copy of the parent's history, so the fork is imported whole, the
// replay included, and its fork entry says so.
func TestForkParentMissing(t *testing.T) {
	t.Parallel()
	_, files := forkHome(t)
	res := importtest.Import(t, Source{}, files[childID], migrate.ImportOptions{})
	if len(res.Sessions) != 1 || len(res.Damage) != 0 {
		t.Fatalf("%d sessions, damage %v", len(res.Sessions), res.Damage)
	}
	s := res.Sessions[0]
	if s.SourceID != childID || s.ParentSourceID != parentID {
		t.Errorf("source id %s parent %s", s.SourceID, s.ParentSourceID)
	}
	l := importtest.Load(t, s, "")
	want := []importtest.Msg{
		{Role: "compactionSummary", Text: "the parent's summary"},
		{Role: "user", Text: "now count lines"},
		{Role: "assistant", Text: "1 line"},
	}
	if diff := cmp.Diff(want, l.Messages()); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	var prompts []string
	for _, e := range l.Entries {
		if e.Type == jsonl.TypeMessage && strings.Contains(string(e.Raw), `"role":"user"`) {
			prompts = append(prompts, string(e.Raw))
		}
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "list files") {
		t.Errorf("user messages %d, want the replayed prompt once and the fork's own", len(prompts))
	}
	if diff := cmp.Diff(map[string]any{"forkedFromId": parentID, "parentHistory": "imported"}, forkNote(t, l)); diff != "" {
		t.Errorf("fork entry (-want +got):\n%s", diff)
	}
}

// TestForkNothingOwn: a fork whose rollout holds only the replay of its
// parent (forked, then left) gives no session of its own; it is reported
// as skipped with the reason.
func TestForkNothingOwn(t *testing.T) {
	t.Parallel()
	home, files := forkHome(t)
	child := rolloutOf(time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC), append([][2]string{{"session_meta", meta(childID, `,"forked_from_id":"`+parentID+`"`)}}, copyOf(parentLines, childID)...))
	writeFile(t, files[childID], []byte(child), time.Time{})
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	var reasons []string
	for _, sk := range res.Skipped {
		if sk.SourceID == childID {
			reasons = append(reasons, sk.Reason)
		}
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "fork") {
		t.Errorf("skipped %v, want the empty fork reported", reasons)
	}
}

// TestUnknownHistoryMode: a rollout whose history_mode this importer does
// not know (Codex itself refuses it) is reported as damage, naming it.
func TestUnknownHistoryMode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := filepath.Join(home, "sessions", "2026", "05", "01", "rollout-2026-05-01T10-00-00-"+parentID+".jsonl")
	writeFile(t, file, []byte(rolloutOf(time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC), [][2]string{
		{"session_meta", meta(parentID, `,"history_mode":"segmented"`)}, userItem("hi"),
	})), time.Time{})
	st, err := Source{}.Open(t.Context(), home, migrate.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for ref := range st.Sessions(t.Context()) {
		_, err := st.Convert(t.Context(), ref)
		var d *migrate.Damage
		if !errors.As(err, &d) || d.Path != file || d.Line != 1 || !strings.Contains(err.Error(), `"segmented"`) {
			t.Errorf("convert: %v, want damage at line 1 naming the mode", err)
		}
	}
}

// TestRepeatedMeta: a rollout's own session_meta written again (Codex
// repeats it, and a resume by a newer Codex names its version) still
// updates the session's facts, as before; another session's meta (a
// replayed copy) does not.
func TestRepeatedMeta(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := filepath.Join(home, "sessions", "2026", "05", "01", "rollout-2026-05-01T10-00-00-"+parentID+".jsonl")
	writeFile(t, file, []byte(rolloutOf(time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC), [][2]string{
		{"session_meta", meta(parentID, "")},
		userItem("hi"),
		{"session_meta", strings.Replace(meta(parentID, ""), "0.140.0", "0.150.0", 1)},
		{"session_meta", strings.Replace(meta(childID, ""), "0.140.0", "9.9.9", 1)},
		answerItem("hello"),
	})), time.Time{})
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	if s := res.Sessions[0]; s.SourceID != parentID || s.SourceVersion != "0.150.0" {
		t.Errorf("source id %s version %s, want %s 0.150.0", s.SourceID, s.SourceVersion, parentID)
	}
}
