package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStatsAllIndex checks that stats --all prints the same, to the
// byte, on stdout and stderr whether its totals come from the files (the
// first run, --no-index) or from the stats index (later runs), that the
// index goes to the user cache directory, that --no-index neither reads
// nor writes it, and that --no-index without --all is a usage error.
func TestStatsAllIndex(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	store := filepath.Join(t.TempDir(), "sessions")
	at := time.Now().Add(-time.Hour)
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(store, "--w--", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(id string, cost string) string {
		return `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":3,"output":4,"cost":{"input":` + cost + `,"output":0.2}}}}` + "\n"
	}
	write("a.jsonl", `{"type":"session","version":3,"id":"a","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`+"\n"+msg("x", "0.1")+msg("y", "0.7"))
	write("b.jsonl", `{"type":"session","version":9,"id":"b","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`+"\n"+msg("x", "0.3"))
	write("c.jsonl", msg("x", "1"))

	indexDir := filepath.Join(cache, "sessctl", "stats-index")
	for _, asJSON := range []bool{false, true} {
		args := []string{"stats", "--all", "--store", store}
		if asJSON {
			args = append(args, "--json")
		}
		wantOut, wantErr, code := runCLI(t, append(args, "--no-index")...)
		if code != exitOK || !strings.Contains(wantErr, "c.jsonl") || !strings.Contains(wantErr, "version 9") {
			t.Fatalf("%v --no-index: exit %d, stderr:\n%s", args, code, wantErr)
		}
		if _, err := os.Stat(indexDir); !os.IsNotExist(err) {
			t.Errorf("--no-index wrote the stats index: %v", err)
		}
		for run := range 2 {
			out, errOut, code := runCLI(t, args...)
			if code != exitOK || out != wantOut || errOut != wantErr {
				t.Errorf("%v, run %d: exit %d, stdout:\n%s\nstderr:\n%s\nwant as with --no-index:\n%s\n%s", args, run+1, code, out, errOut, wantOut, wantErr)
			}
			if ents, err := os.ReadDir(indexDir); err != nil || len(ents) != 1 {
				t.Errorf("%v, run %d: stats index %v, %v; want one file", args, run+1, ents, err)
			}
		}
		if err := os.RemoveAll(indexDir); err != nil {
			t.Fatal(err)
		}
	}
	if _, errOut, code := runCLI(t, "stats", "--no-index", filepath.Join(store, "--w--", "a.jsonl")); code != exitUsage || !strings.Contains(errOut, "--no-index") {
		t.Errorf("stats --no-index SESSION: exit %d, stderr %q", code, errOut)
	}
}
