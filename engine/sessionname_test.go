package engine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// An empty or blank name clears the session's name, in Name and in the
// listing, as in pi 0.73.1 (0.58.3 kept the earlier name).
func TestEmptyNameClearsTheName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.UnixMilli(1772355600000)
	must[string](t)(s.AppendMessage(message.NewUser("hello", at)))
	must[string](t)(s.AppendMessage(reply(at)))
	listed := func() (string, bool) {
		t.Helper()
		infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(t.Context(), "/", engine.ListOptions{NoIndex: true, EveryCwd: true})
		if err != nil || len(infos) != 1 {
			t.Fatalf("list: %v, %d sessions", err, len(infos))
		}
		return infos[0].Name, infos[0].HasName
	}
	for _, step := range []struct {
		set  string
		want string
	}{
		{"  Planning  ", "Planning"},
		{"", ""},
		{"Again", "Again"},
		{" \t ", ""},
	} {
		must[string](t)(s.AppendSessionInfo(step.set))
		n, ok := s.Name()
		if n != step.want || ok != (step.want != "") {
			t.Errorf("after AppendSessionInfo(%q): Name() = %q, %v; want %q", step.set, n, ok, step.want)
		}
		if n, ok := listed(); n != step.want || ok != (step.want != "") {
			t.Errorf("after AppendSessionInfo(%q): listed name %q, %v; want %q", step.set, n, ok, step.want)
		}
	}
}

// The list index keeps the listing fields of each file by size and mtime.
// An index written by a sessctl that followed pi 0.58.3's name rule (format
// version 3) must not be used: it would still give the name an empty
// name has cleared since.
func TestListIndexOfTheOldNameRuleIsNotUsed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	header := `{"type":"session","version":3,"id":"11111111-1111-4111-8111-111111111111","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`
	user := func(text string) string {
		return `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1772355601000}}`
	}
	named := func(id, parent, name string) string {
		return `{"type":"session_info","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-03-01T09:00:02.000Z","name":"` + name + `"}`
	}
	cleared := header + "\n" + user("hi") + "\n" + named("n1", "a1", "x") + "\n" + named("n2", "n1", "") + "\n"
	// The same size, named "x" under either rule.
	pad := len(cleared) - len(header+"\n"+user("")+"\n"+named("n1", "a1", "x")+"\n")
	plain := header + "\n" + user(strings.Repeat("h", pad)) + "\n" + named("n1", "a1", "x") + "\n"
	if len(plain) != len(cleared) {
		t.Fatalf("sizes %d and %d", len(plain), len(cleared))
	}
	file := filepath.Join(dir, "s.jsonl")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, old, old); err != nil {
			t.Fatal(err)
		}
	}
	list := func() *engine.Info {
		t.Helper()
		infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", engine.ListOptions{EveryCwd: true})
		if err != nil || len(infos) != 1 {
			t.Fatalf("list: %v, %d sessions", err, len(infos))
		}
		return &infos[0]
	}
	write(plain)
	if in := list(); in.Name != "x" { // writes the index
		t.Fatalf("name %q, want x", in.Name)
	}
	// What the index would be had a sessctl of format version 3 written
	// it, then the file as pi 0.73.1 leaves it after clearing the name.
	idx := indexPath(t, dir)
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(data, '\n')
	head := regexp.MustCompile(`"sessctlListIndex":[0-9]+`).ReplaceAll(data[:nl], []byte(`"sessctlListIndex":3`))
	if err := os.WriteFile(idx, append(head, data[nl:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	write(cleared)
	if in := list(); in.HasName {
		t.Errorf("listed name %q from an index of the old name rule; the file's last session_info clears it", in.Name)
	}
}
