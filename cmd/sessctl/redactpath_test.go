package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedactLeavesPaths checks that --redact never rewrites the paths an
// export names (the file, the working directory, the parent session),
// even when they look like secrets, while the same text in a message is
// still masked. A store path once came out as "<dir>/.[REDACTED].jsonl".
func TestRedactLeavesPaths(t *testing.T) {
	secretish := "aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD" // 32 random-looking characters
	dir := filepath.Join(t.TempDir(), "AKIAIOSFODNN7EXAMPLE")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "."+secretish+".jsonl")
	cwd := "/home/dev/ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3/" + secretish
	parent := "/store/.pi/" + secretish + "/x.jsonl"
	header := `{"type":"session","version":3,"id":"` + secretish + `","timestamp":"2026-03-01T09:00:00.000Z","cwd":"` + cwd + `","parentSession":"` + parent + `"}`
	msg := `{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"key ` + secretish + ` in /Users/JaneDoe42/Qx7Service/internal/Zk9Handler/Main3.go","timestamp":1}}`
	if err := os.WriteFile(file, []byte(header+"\n"+msg+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runCLI(t, "export", "--format", "json", "--redact", file)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	var got struct {
		Path     string
		Header   struct{ ID, Cwd, ParentSession string }
		Leaf     string
		Messages []struct {
			Message struct{ Content string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(file)
	if got.Path != abs || got.Header.Cwd != cwd || got.Header.ParentSession != parent || got.Header.ID != secretish || got.Leaf != "m1" {
		t.Errorf("redaction changed the file's description:\npath   %s\nheader %+v\nleaf   %s", got.Path, got.Header, got.Leaf)
	}
	wantText := "key [REDACTED] in /Users/JaneDoe42/Qx7Service/internal/Zk9Handler/Main3.go"
	if len(got.Messages) != 1 || got.Messages[0].Message.Content != wantText {
		t.Errorf("message content = %+v, want %q", got.Messages, wantText)
	}

	md, errOut, code := runCLI(t, "export", "--redact", file)
	if code != exitOK {
		t.Fatalf("export md: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"- **Working directory:** `" + cwd + "`", "- **Parent session:** `" + parent + "`", "- **Session:** `" + secretish + "`"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown export lacks %q:\n%s", want, md)
		}
	}
}
