//go:build ignore

// make.go writes agsh-data/sessions.db: an agsh sessions database with
// the schema agsh 0.1 to 0.11 create (sessions still have locked_by) and
// rows in the forms those releases write them, read off agsh's source
// (k4yt3x/agsh, tags 0.4.0 to 0.11.0; see README.md). It is this
// project's code, not agsh's: agsh itself needs a model to write a turn.
//
//	go run make.go [DIR]    (run here; DIR defaults to agsh-data)
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

// The tables agsh 0.8.1 to 0.11 create (0.1 to 0.8.0 lack tool_outputs
// and the OAuth tables, which the importer does not read).
var schema = []string{
	`CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, locked_by TEXT, metadata TEXT)`,
	`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, FOREIGN KEY (session_id) REFERENCES sessions(id))`,
	`CREATE INDEX idx_messages_session_id ON messages(session_id)`,
	`CREATE TABLE oauth_tokens (provider TEXT PRIMARY KEY, access_token TEXT NOT NULL, refresh_token TEXT, expires_at INTEGER, updated_at TEXT NOT NULL)`,
	`CREATE TABLE mcp_oauth_credentials (server_name TEXT PRIMARY KEY, credentials_json TEXT NOT NULL, updated_at TEXT NOT NULL)`,
	`CREATE TABLE tool_outputs (session_id TEXT NOT NULL, name TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (session_id, name), FOREIGN KEY (session_id) REFERENCES sessions(id))`,
}

// Content blocks as serde writes agsh's ContentBlock (internally tagged
// by "type", fields in declaration order; an absent signature is null).
type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinking struct {
	Type      string  `json:"type"`
	Thinking  string  `json:"thinking"`
	Signature *string `json:"signature"`
}

type toolUse struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input any    `json:"input"`
}

type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   any    `json:"content"` // a string before 0.8, parts since
	IsError   bool   `json:"is_error"`
}

type image struct {
	Type   string `json:"type"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

func txt(s string) text { return text{"text", s} }

func think(s string, sig *string) thinking { return thinking{"thinking", s, sig} }

func use(id, name string, input any) toolUse { return toolUse{"tool_use", id, name, input} }

func result(id string, content any, isErr bool) toolResult {
	return toolResult{"tool_result", id, content, isErr}
}

// blocks encodes content blocks as serde_json does: compact, object keys
// of a JSON value sorted, and <, > and & not escaped.
func blocks(bs ...any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(bs); err != nil {
		log.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// turnContext is the block agsh 0.10 and later put before every prompt
// (build_turn_context): the task list, when there is one, and the
// environment (not in permission mode none).
func turnContext(todos, cwd, date, prompt string) string {
	return "<context>\n" + todos + "[Environment context]\nWorking directory: " + cwd + "\nDate: " + date + "\n</context>\n\n" + prompt
}

// A real Anthropic thinking signature is a long base64 string; this one
// is made up.
var signature = strings.Repeat("EqQBCkgIBxABGAIqQKZ3b2ZrZXNpZ25hdHVyZQ", 6) + "=="

func ptr(s string) *string { return &s }

// The 1x1 PNG the importer tests expect.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="

type row struct{ role, content string }

type session struct {
	id, created, lockedBy string
	rows                  []row
}

func main() {
	dir := "agsh-data"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "sessions.db")
	for _, p := range []string{path, path + "-journal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			log.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range schema {
		if _, err := db.Exec(q); err != nil {
			log.Fatal(err)
		}
	}
	img := image{Type: "image"}
	img.Source.Type, img.Source.MediaType, img.Source.Data = "base64", "image/png", pixel

	sessions := []session{
		// 0.11 with the Claude provider: the <context> block with a task
		// list, thinking with a signature, with none (null) and with an
		// empty one, tool results as parts (text, image), a later block
		// naming another working directory.
		{id: "9b2f6a1e-4c3d-4e5f-8a7b-1c2d3e4f5a60", created: "2026-04-17T08:00:00.118240507+00:00", rows: []row{
			{"user", turnContext("[Current task list]\n[~] 1 - Fix the build\n[ ] 2 - Update the docs\n\n", "/home/user/work/site", "Fri, 17 Apr 2026 10:00:00 +0200", "why does `make` fail?")},
			{"assistant", blocks(think("The user wants to know why make fails. Run it.", &signature), txt("Let me run it."), use("toolu_01Ma8kEbuiLd7Xq2Wn4Rt6Yp", "execute_command", map[string]any{"command": "make"}))},
			{"tool_results", blocks(result("toolu_01Ma8kEbuiLd7Xq2Wn4Rt6Yp", []any{txt("make: *** No rule to make target 'build'.  Stop.\n"), txt("exit code: 2")}, true))},
			{"assistant", blocks(think("The Makefile has no build target.", nil), txt("There is no `build` target in the Makefile; `make site` builds the site."))},
			{"user", turnContext("", "/home/user/work/site/docs", "Fri, 17 Apr 2026 10:05:00 +0200", "show me the logo")},
			{"assistant", blocks(use("toolu_01Lg7Pq2Rs4Tu6Vw8Xy0Za1B", "read_file", map[string]any{"path": "logo.png"}))},
			{"tool_results", blocks(result("toolu_01Lg7Pq2Rs4Tu6Vw8Xy0Za1B", []any{img}, false))},
			{"assistant", blocks(think("A tiny image.", ptr("")), txt("It is a 1x1 PNG."))},
		}},
		// 0.11, compacted (0.8.1 and later): the summary with the
		// post-compaction context, the kept tail as agsh saves it (a
		// user message with its context block; the tool results it kept
		// as an empty user message), then new turns. The lock of a
		// process that is gone is still recorded.
		{id: "3c8e1f2a-7b6d-4a5c-9e8f-0a1b2c3d4e5f", created: "2026-04-16T15:30:00.402211390+00:00", lockedBy: "48213", rows: []row{
			{"user", "[Conversation summary from session compaction]\n\n## Summary\nThe user is renaming the project from site to www. The Makefile and the CI file are done.\n\n[Post-compaction context]\n\n[Environment context]\nWorking directory: /home/user/proj\nDate: Thu, 16 Apr 2026 18:00:00 +0200\n\n[Scratchpad entries]\n- \"execute_command_1\" (34.1 KB)\n"},
			{"user", turnContext("", "/home/user/proj", "Thu, 16 Apr 2026 17:58:00 +0200", "now update the README")},
			{"assistant", blocks(use("toolu_01Ed5Fg6Hi7Jk8Lm9No0Pq1R", "edit_file", map[string]any{"path": "README.md", "old_string": "site", "new_string": "www"}))},
			{"user", ""},
			{"assistant", blocks(txt("Updated the README."))},
			{"user", turnContext("", "/home/user/proj", "Thu, 16 Apr 2026 18:01:00 +0200", "thanks")},
			{"assistant", blocks(txt("You're welcome."))},
		}},
		// 0.4 to 0.7: the environment before the prompt, without tags;
		// tool results as a string (before 0.8).
		{id: "71d0c9b8-a7f6-4e5d-8c4b-3a2918070605", created: "2026-03-17T08:00:00.000512000+00:00", rows: []row{
			{"user", "[Environment context]\nWorking directory: /srv/app\nDate: Tue, 17 Mar 2026 09:00:00 +0100\n\nlist files"},
			{"assistant", blocks(use("toolu_01Ls0Aa1Bb2Cc3Dd4Ee5Ff6G", "execute_command", map[string]any{"command": "ls"}))},
			{"tool_results", blocks(result("toolu_01Ls0Aa1Bb2Cc3Dd4Ee5Ff6G", "a.txt\nb.txt\n", false))},
			{"assistant", blocks(txt("Two files: a.txt and b.txt."))},
		}},
		// 0.8 and 0.9: the task list and the environment, without tags.
		{id: "05a4b3c2-d1e0-4f9e-8d7c-6b5a49382716", created: "2026-04-13T10:00:00.250000000+00:00", rows: []row{
			{"user", "[Current task list]\n[x] 1 - List files\n[ ] 2 - Count lines\n\n[Environment context]\nWorking directory: /srv/app\nDate: Mon, 13 Apr 2026 12:00:00 +0200\n\ncount the lines of a.txt"},
			{"assistant", blocks(txt("a.txt has 3 lines."))},
		}},
		// 0.11 in permission mode none with no tasks: no block at all, so
		// the working directory is unknown.
		{id: "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70", created: "2026-04-17T09:00:00.999999999+00:00", rows: []row{
			{"user", "hi"},
			{"assistant", blocks(txt("Hello!"))},
		}},
	}
	for si, s := range sessions {
		var lock any
		if s.lockedBy != "" {
			lock = s.lockedBy
		}
		if _, err := db.Exec(`INSERT INTO sessions (id, created_at, updated_at, locked_by) VALUES (?, ?, ?, ?)`, s.id, s.created, s.created, lock); err != nil {
			log.Fatal(err)
		}
		start, err := time.Parse(time.RFC3339Nano, s.created)
		if err != nil {
			log.Fatal(err)
		}
		for i, r := range s.rows {
			// chrono's to_rfc3339: nanoseconds and "+00:00".
			t := start.Add(time.Duration(i)*3*time.Second + time.Duration(si*1000+i*7919)*time.Microsecond)
			at := t.UTC().Format("2006-01-02T15:04:05.000000000") + "+00:00"
			if _, err := db.Exec(`INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)`, s.id, r.role, r.content, at); err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", path)
}
