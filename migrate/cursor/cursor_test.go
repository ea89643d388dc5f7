package cursor

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

const (
	readID  = "call_Qm3kV8pX2rT7nL1sY9dF4hJ6\nfc_689b1c2d3e4f5a6b7c8d9e0f1a2b3c4d0c5a6bc8405a405b"
	editID  = "call_Zx7cV2bN5mA8sD1fG4hJ0kL3\nfc_689b1c2d3e4f5a6b7c8d9e0f1a2b3c4e0c5a6bc8405a405b"
	shellID = "call_Pq9wE2rT5yU8iO1pA4sD7fG0\nfc_689b1c2d3e4f5a6b7c8d9e0f1a2b3c4f0c5a6bc8405a405b"
)

// TestCorpus imports the hand-made store.db of the corpus: the latest
// root's messages in its order, the superseded reply left out,
// <user_query> unwrapped, <user_info> out of the transcript.
func TestCorpus(t *testing.T) {
	t.Parallel()
	root := importtest.Corpus(t, "cursor")
	home := filepath.Join(root, "handmade-store-db", "cursor-home")
	db := filepath.Join(home, "chats", "31bf9be8dab14ea81743876242131f3f", "3f2b8c1e-7d4a-4e59-9a61-2c8d0f5b7e13", "store.db")
	before := dirState(t, filepath.Dir(db))
	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, home, opts)
	if len(res.Damage) > 0 || len(res.Sessions) != 1 {
		t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
	}
	if after := dirState(t, filepath.Dir(db)); after != before {
		t.Errorf("the source directory changed:\n%s\n%s", before, after)
	}
	s := res.ByID(t, "3f2b8c1e-7d4a-4e59-9a61-2c8d0f5b7e13")
	if s.Cwd != "/home/user/projects/todo-api" || !s.CwdKnown || s.Name != "Add input validation to POST /todos" {
		t.Errorf("cwd %q known %v name %q", s.Cwd, s.CwdKnown, s.Name)
	}
	if s.Start.UnixMilli() != 1754995832417 {
		t.Errorf("start %v", s.Start)
	}
	l := importtest.Load(t, s, "")
	got := l.Messages()
	for i := range got {
		if got[i].Role == "toolResult" {
			got[i].Text = ""
		}
	}
	want := []importtest.Msg{
		{Role: "user", Text: "add input validation to POST /todos: title must be a non-empty string"},
		{Role: "assistant", Text: "I'll open the todos route first.", ToolCalls: []string{readID}},
		{Role: "toolResult", ToolCallID: readID},
		{Role: "assistant", ToolCalls: []string{editID}},
		{Role: "toolResult", ToolCallID: editID},
		{Role: "assistant", Text: "Added a guard at the top of the POST handler: requests whose `title` is missing, not a string, or blank now get `400 {\"error\": \"title must be a non-empty string\"}`."},
		{Role: "user", Text: "now run the tests\x7f\x7f\x7fests"},
		{Role: "assistant", ToolCalls: []string{shellID}},
		{Role: "toolResult", ToolCallID: shellID},
		{Role: "assistant", Text: "One test still fails: the server under test was started from a stale build. Rebuild (`npm run build`) and rerun; the other 6 pass."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	importtest.CheckToolPairs(t, s.SourceID, got)
	file := string(s.Bytes(""))
	for _, frag := range []string{`"customType":"cursor-user-info"`, `"model":"gpt-5"`, `"thinkingSignature":"{\"id\":\"rs_`} {
		if !strings.Contains(file, frag) {
			t.Errorf("file lacks %s", frag)
		}
	}
	for _, bad := range []string{"superseded", "<user_query>", "You are an AI coding assistant"} {
		if strings.Contains(file, bad) {
			t.Errorf("file holds %q", bad)
		}
	}
	importtest.CheckReimport(t, Source{}, home, opts, res)
}

// dirState lists a directory's names, sizes and modification times.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+" "+fi.ModTime().String()+" "+strconv.FormatInt(fi.Size(), 10))
	}
	return strings.Join(out, "\n")
}

// protoRoot encodes a root blob listing the given blob ids.
func protoRoot(ids ...string) []byte {
	var b []byte
	for _, id := range ids {
		raw, _ := hex.DecodeString(id)
		b = append(b, 0x0a, byte(len(raw)))
		b = append(b, raw...)
	}
	// An unrelated field the importer must skip.
	return append(b, 0x10, 0x96, 0x01)
}

func blobID(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// TestFixture builds a store.db in WAL mode with the driver: messages out
// of table order, a damaged blob named by the root, an image, a tool error.
func TestFixture(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, "chats", "abc", "agent-1", "store.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	msgs := []string{
		`{"role":"user","content":[{"type":"text","text":"<user_info>\nWorkspace Path: /w/app\n</user_info>\nplease <user_query>\nfix it\n</user_query>"}]}`,
		`{"id":"1","role":"assistant","content":[{"type":"tool-call","toolCallId":"t1","toolName":"Shell","args":{"command":"make"}}]}`,
		`{"role":"tool","id":"t1","content":[{"toolName":"Shell","toolCallId":"t1","type":"tool-result","result":{"exitCode":2},"isError":true}]}`,
		`{broken json`,
		`{"id":"1","role":"assistant","content":[{"type":"text","text":"make failed"}]}`,
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, blobID([]byte(m)))
	}
	rootData := protoRoot(ids...)
	meta := `{"agentId":"agent-1","latestRootBlobId":"` + blobID(rootData) + `","name":"Fix","mode":"default","createdAt":1754000000000,"lastUsedModel":"m-1"}`
	stmts := []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`,
		`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString([]byte(meta))); err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- { // table order is not conversation order
		if _, err := db.Exec(`INSERT INTO blobs VALUES (?, ?)`, ids[i], []byte(msgs[i])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO blobs VALUES (?, ?)`, blobID(rootData), rootData); err != nil {
		t.Fatal(err)
	}
	// The writer stays open: the -wal and -shm files exist while importing.
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != path || !strings.Contains(res.Damage[0].Error(), "message 4") {
		t.Fatalf("damage %v", res.Damage)
	}
	s := res.ByID(t, "agent-1")
	if s.Cwd != "/w/app" {
		t.Errorf("cwd %q", s.Cwd)
	}
	got := importtest.Load(t, s, "").Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "please fix it"},
		{Role: "assistant", ToolCalls: []string{"t1"}},
		{Role: "toolResult", Text: `{"exitCode":2}`, ToolCallID: "t1"},
		{Role: "assistant", Text: "make failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(s.Bytes("")), `"isError":true`) {
		t.Error("tool error lost")
	}
}

// TestModel: the model is the chat's lastUsedModel, or "unknown" when the
// chat records none.
func TestModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ meta, want string }{
		{`,"lastUsedModel":"gpt-5"`, `"provider":"cursor","model":"gpt-5"`},
		{``, `"provider":"cursor","model":"unknown"`},
	} {
		home := t.TempDir()
		path := filepath.Join(home, "chats", "abc", "agent-1", "store.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		msgs := []string{
			`{"role":"user","content":[{"type":"text","text":"hi"}]}`,
			`{"id":"1","role":"assistant","content":[{"type":"text","text":"hello"}]}`,
		}
		var ids []string
		for _, m := range msgs {
			ids = append(ids, blobID([]byte(m)))
		}
		root := protoRoot(ids...)
		meta := `{"agentId":"agent-1","latestRootBlobId":"` + blobID(root) + `","name":"Hi","mode":"default","createdAt":1754000000000` + c.meta + `}`
		for _, q := range []string{`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString([]byte(meta))); err != nil {
			t.Fatal(err)
		}
		for i, m := range append(msgs, string(root)) {
			id := blobID(root)
			if i < len(ids) {
				id = ids[i]
			}
			if _, err := db.Exec(`INSERT INTO blobs VALUES (?, ?)`, id, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		res := importtest.Import(t, Source{}, home, migrate.ImportOptions{Cwd: "/w"})
		if f := string(res.ByID(t, "agent-1").Bytes("")); !strings.Contains(f, c.want) {
			t.Errorf("want %s in\n%s", c.want, f)
		}
	}
}
