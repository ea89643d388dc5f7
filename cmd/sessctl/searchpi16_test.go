package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestSearchPi16Entries: search finds a system message with role system
// (--role system keeps it), a context edit's replacement as the edit's
// own hit, the message it replaces and the one it omits by their own
// text, and no usage entry; with the index and without.
func TestSearchPi16Entries(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, CacheDir: filepath.Join(tmp, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(ctx, "/w/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1772355600000)
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Total: 0.25})
	ids := map[string]string{}
	add := func(name string, id string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = name
	}
	id, err := s.AppendMessage(message.NewSystem("answer tersely like a pelican", at))
	add("system system", id, err)
	id, err = s.AppendMessage(message.NewUser("paste the whole gibbon log", at))
	add("user user", id, err)
	user := id
	id, err = s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText("HUGE gibbon LOG")}, usage, message.StopStop, at))
	add("assistant text", id, err)
	asst := id
	id, err = s.AppendUsage("title", "anthropic", "claude-haiku", usage, "gibbon pelican note")
	add("usage", id, err)
	id, err = s.AppendContextEdit(user, nil)
	add("omit", id, err)
	id, err = s.AppendContextEdit(asst, "[gibbon log removed by okapi]")
	add("replace contextEdit", id, err)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(tmp, "index")
	for _, mode := range [][]string{{"--index-dir", idx}, {"--no-index"}} {
		for _, tc := range []struct {
			args []string
			want []string // "name role kind"
		}{
			{[]string{"gibbon OR pelican OR okapi"}, []string{"system system system", "user user user", "assistant assistant text", "replace other contextEdit"}},
			{[]string{"--role", "system", "gibbon OR pelican"}, []string{"system system system"}},
			{[]string{"--role", "other", "gibbon OR pelican"}, []string{"replace other contextEdit"}},
		} {
			args := append(append([]string{"search", "--store", dir, "--json"}, mode...), tc.args...)
			out, errOut, code := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("sessctl %v: exit %d: %s", args, code, errOut)
			}
			got := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var h struct{ Entry, Role, Kind string }
				if err := json.Unmarshal([]byte(l), &h); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				name := strings.Fields(ids[h.Entry] + " ?")[0]
				got[name+" "+h.Role+" "+h.Kind] = true
			}
			if len(got) != len(tc.want) {
				t.Errorf("sessctl %v: hits %v, want %v", args, got, tc.want)
			}
			for _, w := range tc.want {
				if !got[w] {
					t.Errorf("sessctl %v: hits %v, want %v", args, got, tc.want)
				}
			}
		}
	}
	// The human output names a replacement "context edit".
	out, _, code := runCLI(t, "search", "--store", dir, "--no-index", "okapi")
	if code != exitOK || !strings.Contains(out, "context edit") {
		t.Errorf("search okapi: exit %d:\n%s", code, out)
	}
}
