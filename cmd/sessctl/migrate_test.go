package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/lock"
)

// sessctl runs the CLI in-process.
func sessctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func writeV1(t *testing.T, dir, name string, seed uint64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if _, err := workload.WriteFile(p, workload.Options{Seed: seed, Entries: 200, Version: 1, ImageEvery: -1}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	a := writeV1(t, dir, "a.jsonl", 1)
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o700)
	b := writeV1(t, sub, "b.jsonl", 2)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"session","version":4,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o600)
	origA, _ := os.ReadFile(a)

	// A dry run writes nothing and says what would happen.
	out, _, code := sessctl(t, "migrate", "--dry-run", dir)
	if code != exitCorrupt {
		t.Errorf("dry run with a version 4 file: exit %d, want 4", code)
	}
	if !strings.Contains(out, a+": would migrate v1 -> v3, 200 entries") {
		t.Errorf("dry run output:\n%s", out)
	}
	if now, _ := os.ReadFile(a); !bytes.Equal(now, origA) {
		t.Fatal("dry run changed a file")
	}
	if _, err := os.Stat(a + ".v1.bak"); err == nil {
		t.Fatal("dry run made a backup")
	}

	// The real run migrates both, keeps backups, refuses the v4 file and
	// exits 4 because of it, and leaves it alone.
	badBefore, _ := os.ReadFile(bad)
	out, errOut, code := sessctl(t, "migrate", dir)
	if code != exitCorrupt {
		t.Errorf("exit %d, want 4 (one file failed); stderr %s", code, errOut)
	}
	for _, p := range []string{a, b} {
		if !strings.Contains(out, p+": migrated v1 -> v3, 200 entries, 0 malformed lines dropped, backup "+p+".v1.bak") {
			t.Errorf("no line for %s in:\n%s", p, out)
		}
		s, err := engine.OpenFile(context.Background(), p, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if v := s.Header().Version; v != 3 {
			t.Errorf("%s: version %v", p, v)
		}
		s.Close()
	}
	if bak, _ := os.ReadFile(a + ".v1.bak"); !bytes.Equal(bak, origA) {
		t.Error("backup differs from the original")
	}
	if !strings.Contains(errOut, "sessctl: migrate: "+bad+": ") || !strings.Contains(errOut, "newer than the supported version 3") {
		t.Errorf("v4 file not reported on stderr:\n%s", errOut)
	}
	if now, _ := os.ReadFile(bad); !bytes.Equal(now, badBefore) {
		t.Error("the v4 file was touched")
	}
	if !strings.Contains(out, "3 files: 2 migrated, 0 would be migrated, 0 already version 3, 1 failed") {
		t.Errorf("summary missing:\n%s", out)
	}

	// A second run has nothing to do; --json gives the documented shape.
	os.Remove(bad)
	out, _, code = sessctl(t, "migrate", "--json", dir)
	if code != exitOK {
		t.Fatalf("second run exit %d", code)
	}
	var doc struct {
		Files []struct {
			Path, Status string
			From, To     float64
		}
		Migrated, Current, Failed int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if doc.Current != 2 || doc.Migrated != 0 || len(doc.Files) != 2 || doc.Files[0].Status != "current" || doc.Files[0].From != 3 {
		t.Errorf("second run: %+v", doc)
	}
}

func TestMutatingCommandsReportTheHolder(t *testing.T) {
	dir := t.TempDir()
	p := writeV1(t, dir, "s.jsonl", 5)
	// Hold the session's writer lock in this process, leaving the file at
	// version 1 (a writer's open would migrate it, and migrate does not
	// lock a file that needs nothing).
	s, err := lock.Acquire(context.Background(), sessionfile.LockPath(p), lock.Options{Command: "agent-under-test"})
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := sessctl(t, "migrate", p)
	if code != exitLocked {
		t.Errorf("migrate of a held session: exit %d, want 3", code)
	}
	if !strings.Contains(errOut, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(errOut, "hint:") {
		t.Errorf("stderr does not name the holder:\n%s", errOut)
	}
	_, _, code = sessctl(t, "migrate", "--wait", "50ms", p)
	if code != exitLocked {
		t.Errorf("migrate --wait: exit %d, want 3 after the wait", code)
	}
	out, _, code := sessctl(t, "who", p)
	if code != exitOK || !strings.Contains(out, "locked by pid "+strconv.Itoa(os.Getpid())+" (agent-under-test") {
		t.Errorf("who: exit %d\n%s", code, out)
	}
	out, _, _ = sessctl(t, "who", "--json", p)
	var w struct {
		Locked bool
		Holder struct {
			PID     int
			Command string
		}
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil || !w.Locked || w.Holder.PID != os.Getpid() || w.Holder.Command != "agent-under-test" {
		t.Errorf("who --json: %v %+v\n%s", err, w, out)
	}
	s.Close()
	out, _, _ = sessctl(t, "who", p)
	if !strings.Contains(out, "not locked") {
		t.Errorf("who after close:\n%s", out)
	}
	if _, _, code := sessctl(t, "migrate", p); code != exitOK {
		t.Errorf("migrate after release: exit %d", code)
	}
}
