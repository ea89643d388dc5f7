package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

func userLine(id, parent, ts, text string) string {
	return msg(id, parent, ts, fmt.Sprintf(`{"role":"user","content":%q,"timestamp":1}`, text))
}

// progressTotal opens the index with a progress callback and returns a
// function that gives the last total reported (0: nothing to index).
func progressIndex(t *testing.T, dir string) (*Index, *int64) {
	t.Helper()
	var total int64
	x := openIndex(t, Options{Dir: dir, Progress: func(done, tot int64) { total = tot }})
	return x, &total
}

func TestGrow(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x, total := progressIndex(t, filepath.Join(t.TempDir(), "index"))
	if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); len(got) != 0 {
		t.Fatalf("zebra before it was written: %v", got)
	}
	*total = 0
	if searchAll(t, x, Query{Text: "zebra", Stores: stores}); *total != 0 {
		t.Errorf("an unchanged store indexed %d bytes", *total)
	}
	firstID, n := fileDocs(t, x, s1)
	add := userLine("z1", "x1", "2026-03-01T10:00:00.000Z", "a zebra crossing")
	appendLines(t, s1, add)
	if diff := cmp.Diff([]string{"z1 user"}, searchAll(t, x, Query{Text: "zebra", Stores: stores})); diff != "" {
		t.Errorf("after growing (-want +got):\n%s", diff)
	}
	if *total != int64(len(add)+1) {
		t.Errorf("growing by %d bytes indexed %d: not from the previous end", len(add)+1, *total)
	}
	// The texts indexed before are kept, not indexed again.
	if first2, n2 := fileDocs(t, x, s1); first2 != firstID || n2 != n+1 {
		t.Errorf("after growing by one text: first text id %d, %d texts; before: %d, %d", first2, n2, firstID, n)
	}
	// The earlier texts are there once, not twice.
	if diff := cmp.Diff([]string{"a1 toolCall", "u1 user"}, searchAll(t, x, Query{Text: "flaky", Stores: stores, Cwd: "/home/dev/app"})); diff != "" {
		t.Errorf("after growing (-want +got):\n%s", diff)
	}
	// A new name is the session's name from then on.
	appendLines(t, s1, entry("session_info", "n2", "z1", "2026-03-01T10:00:01.000Z", `"name":"  Renamed  "`))
	hits, err := collect(x, Query{Text: "zebra", Stores: stores})
	if err != nil || len(hits) != 1 || hits[0].Session.Name != "Renamed" {
		t.Errorf("after renaming: %+v, %v", hits, err)
	}
}

// fileDocs returns the smallest text id of a file in the index and its
// number of texts.
func fileDocs(t *testing.T, x *Index, path string) (first int64, n int) {
	t.Helper()
	if ownEngine() {
		return ownFileDocs(t, x, path)
	}
	withShards(t, x, func() {
		for _, s := range x.shards {
			err := s.db.QueryRow(`SELECT coalesce(min(d.id), 0), count(*) FROM docs d JOIN files f ON f.id = d.file WHERE f.path = ?`, path).Scan(&first, &n)
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
		}
		t.Fatalf("%s is not in the index", path)
	})
	return first, n
}

// withShards runs fn with the index's databases open (x.shards), as a
// search has them.
func withShards(t *testing.T, x *Index, fn func()) {
	t.Helper()
	if err := x.use(context.Background(), nil, func() error { fn(); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestGrowTornLine(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{})
	line := userLine("z1", "x1", "2026-03-01T10:00:00.000Z", "a zebra crossing")
	f, err := os.OpenFile(s1, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(line[:20]) // a writer in the middle of a line
	if got := searchAll(t, x, Query{Text: "zebra OR flaky", Stores: stores, Cwd: "/home/dev/app"}); !cmp.Equal(got, []string{"a1 toolCall", "u1 user"}) {
		t.Errorf("with a torn last line: %v", got)
	}
	f.WriteString(line[20:]) // complete, still without its newline
	if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); !cmp.Equal(got, []string{"z1 user"}) {
		t.Errorf("with a whole last line without newline: %v", got)
	}
	f.WriteString("\n" + userLine("z2", "z1", "2026-03-01T10:00:01.000Z", "zebra again") + "\n")
	if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); !cmp.Equal(got, []string{"z2 user", "z1 user"}) {
		t.Errorf("after the newline and another line: %v", got)
	}
}

func TestReplaceShrinkDelete(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{})
	q := Query{Text: "flaky OR zebra OR okapi", Stores: stores}
	if got := searchAll(t, x, q); !cmp.Equal(got, []string{"u2 user", "a1 toolCall", "u1 user"}) {
		t.Fatalf("before: %v", got)
	}

	// Replaced by another file (a rewrite: new inode, other bytes).
	tmp := s1 + ".tmp"
	writeLines(t, tmp, []string{fixture1[0], userLine("o1", "", "2026-03-01T09:30:00.000Z", "an okapi, longer than before, so the file is bigger")})
	if err := os.Rename(tmp, s1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"u2 user", "o1 user"}, searchAll(t, x, q)); diff != "" {
		t.Errorf("after replacing (-want +got):\n%s", diff)
	}

	// Rewritten in place: its last line changed, and it grew.
	data, _ := os.ReadFile(s2)
	edited := strings.Replace(string(data), "flaky network", "stable network", 1)
	edited += userLine("z1", "u2", "2026-03-05T10:00:02.000Z", "zebra") + "\n"
	if err := os.WriteFile(s2, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"z1 user", "o1 user"}, searchAll(t, x, q)); diff != "" {
		t.Errorf("after rewriting in place (-want +got):\n%s", diff)
	}

	// Shrunk: the last line cut off.
	if err := os.WriteFile(s2, data[:strings.Index(string(data), "\n")+1], 0o600); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"o1 user"}, searchAll(t, x, q)); diff != "" {
		t.Errorf("after shrinking (-want +got):\n%s", diff)
	}

	// Deleted.
	if err := os.Remove(s1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, searchAll(t, x, q)); diff != "" {
		t.Errorf("after deleting (-want +got):\n%s", diff)
	}
	// Nothing is left of it in the index.
	if ownEngine() {
		if ownHasFile(t, x, s1) {
			t.Errorf("the own index still knows the deleted file")
		}
		return
	}
	withShards(t, x, func() {
		for _, s := range x.shards {
			var n int
			s.db.QueryRow(`SELECT count(*) FROM files WHERE path = ?`, s1).Scan(&n)
			if n != 0 {
				t.Errorf("%s still has a row for the deleted file", s.path)
			}
		}
	})
}

func TestNotASession(t *testing.T) {
	root := t.TempDir()
	writeLines(t, filepath.Join(root, "notes.jsonl"), []string{`{"kind":"note","text":"flaky"}`, userLine("u1", "", "2026-03-01T09:00:01.000Z", "flaky")})
	x := openIndex(t, Options{})
	if got := searchAll(t, x, Query{Text: "flaky", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}}); len(got) != 0 {
		t.Errorf("a file without a session header gave hits: %v", got)
	}
}

func TestDamagedIndex(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	want := []string{"u2 user", "a1 toolCall", "u1 user"}
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			if err := os.WriteFile(path, []byte(strings.Repeat("garbage!", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"pages overwritten", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			for off := int64(4096); off < st.Size(); off += 4096 {
				f.WriteAt([]byte(strings.Repeat("\xff", 64)), off+8)
			}
		}},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 5000); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			x, err := Open(context.Background(), Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if got := searchAll(t, x, Query{Text: "flaky", Stores: stores}); !cmp.Equal(got, want) {
				t.Fatalf("before: %v", got)
			}
			x.Close() // (the last connection closed checkpoints: no WAL hides the damage)
			for _, p := range indexDataFiles(t, dir) {
				tc.damage(t, p)
			}
			x = openIndex(t, Options{Dir: dir})
			if _, err := x.Check(context.Background()); err != nil {
				t.Fatalf("check: %v", err)
			}
			if diff := cmp.Diff(want, searchAll(t, x, Query{Text: "flaky", Stores: stores})); diff != "" {
				t.Errorf("after damage (-want +got):\n%s", diff)
			}
			if n, err := x.Check(context.Background()); n != 0 || err != nil {
				t.Errorf("the rebuilt index fails its check: %d, %v", n, err)
			}
		})
	}
}

func TestDamageFoundBySearch(t *testing.T) {
	// Without Check: a search that meets a damaged file rebuilds it,
	// whether opening, updating or querying finds the damage.
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	cases := []struct {
		name   string
		damage func(path string, data []byte) []byte
	}{
		{"header only", func(string, []byte) []byte { return []byte("SQLite format 3\x00" + strings.Repeat("\x00", 200)) }},
		{"pages overwritten", func(_ string, data []byte) []byte {
			for off := 4096; off+72 < len(data); off += 4096 {
				copy(data[off+8:], strings.Repeat("\xff", 64))
			}
			return data
		}},
		{"second half gone", func(_ string, data []byte) []byte { return data[:len(data)/2] }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			x, err := Open(context.Background(), Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			searchAll(t, x, Query{Text: "flaky", Stores: stores})
			x.Close()
			for _, p := range indexDataFiles(t, dir) {
				os.Remove(p + "-wal")
				os.Remove(p + "-shm")
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, tc.damage(p, data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			x = openIndex(t, Options{Dir: dir})
			if diff := cmp.Diff([]string{"u2 user", "a1 toolCall", "u1 user"}, searchAll(t, x, Query{Text: "flaky", Stores: stores})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDamagedTextIndex(t *testing.T) {
	skipOwn(t, "damages FTS5's tables through SQLite")
	// The FTS5 tables damaged through SQLite, so that the record of the
	// files (state.go) takes the damage for sessctl's own writes: only
	// the update or the query meets it.
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	want := []string{"u2 user", "a1 toolCall", "u1 user"}
	for _, damage := range []string{
		`UPDATE fts_data SET block = randomblob(length(block)) WHERE id > 10`,
		// SQLite says "invalid fts5 file format", SQLITE_ERROR, not
		// SQLITE_CORRUPT.
		`UPDATE fts_config SET v = 0 WHERE k = 'version'`,
	} {
		x := openIndex(t, Options{})
		searchAll(t, x, Query{Text: "flaky", Stores: stores})
		withShards(t, x, func() {
			for _, s := range x.shards {
				if _, err := s.db.Exec(damage); err != nil {
					t.Fatal(err)
				}
			}
		})
		if diff := cmp.Diff(want, searchAll(t, x, Query{Text: "flaky", Stores: stores})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", damage, diff)
		}
	}
}

func TestRebuild(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, Options{Dir: dir})
	searchAll(t, x, Query{Text: "flaky", Stores: stores})
	var total int64
	y := openIndex(t, Options{Dir: dir, Rebuild: true, Progress: func(_, tot int64) { total = tot }})
	if got := searchAll(t, y, Query{Text: "flaky", Stores: stores}); len(got) != 3 {
		t.Errorf("after a rebuild: %v", got)
	}
	if total == 0 {
		t.Error("Rebuild indexed nothing")
	}
}

// searcher is a child process: it appends lines with its word to its own
// session file and searches for the word after each, in a store and an
// index another searcher uses at the same time. Arguments: store root,
// index dir, file, word, rounds.
func searcher() int {
	a := os.Args[1:]
	root, dir, file, word := a[0], a[1], a[2], a[3]
	rounds, _ := strconv.Atoi(a[4])
	fail := func(format string, v ...any) int {
		fmt.Fprintf(os.Stderr, "searcher %s: %s\n", word, fmt.Sprintf(format, v...))
		return 1
	}
	for i := 1; i <= rounds; i++ {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fail("%v", err)
		}
		f.WriteString(userLine(fmt.Sprintf("%s%d", word, i), "", fmt.Sprintf("2026-03-02T00:00:%02d.000Z", i), word+" round") + "\n")
		f.Close()
		x, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			return fail("open: %v", err)
		}
		hits, err := collect(x, Query{Text: word, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}})
		x.Close()
		if err != nil {
			return fail("round %d: %v", i, err)
		}
		if len(hits) != i {
			return fail("round %d: %d hits", i, len(hits))
		}
	}
	return 0
}

func TestConcurrentProcesses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	// Enough sessions that the first builds of the two processes overlap.
	for i := range 200 {
		lines := append([]string{header(fmt.Sprintf("fill-%d", i), "/w", "2026-03-01T00:00:00.000Z")}, fixture1[1:]...)
		writeLines(t, filepath.Join(root, fmt.Sprintf("fill-%03d.jsonl", i)), lines)
	}
	dir := filepath.Join(t.TempDir(), "index")
	const rounds = 8
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, word := range []string{"alpaca", "bonobo"} {
		file := filepath.Join(root, word+".jsonl")
		writeLines(t, file, []string{header(word, "/w", "2026-03-02T00:00:00.000Z")})
		cmd := testenv.Command("searcher", root, dir, file, word, strconv.Itoa(rounds))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("searcher %d: %v\n%s", i, err, outs[i])
		}
	}
	x := openIndex(t, Options{Dir: dir})
	if n, err := x.Check(context.Background()); n != 0 || err != nil {
		t.Errorf("check after concurrent use: %d damaged, %v", n, err)
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	for _, word := range []string{"alpaca", "bonobo"} {
		if got := searchAll(t, x, Query{Text: word, Stores: stores}); len(got) != rounds {
			t.Errorf("%s: %d hits, want %d", word, len(got), rounds)
		}
	}
	if got := searchAll(t, x, Query{Text: "narwhal", Stores: stores}); len(got) != 200 {
		t.Errorf("narwhal: %d hits, want 200 (one per session)", len(got))
	}
}

// TestDeleteOverlappingStores: a deleted file leaves the index whatever
// stores name it: one directory as both formats, a store with another
// inside it (whose walk finds the inner files twice), and a file deleted
// while another is added (as many files as before).
func TestDeleteOverlappingStores(t *testing.T) {
	for _, c := range []struct {
		name   string
		stores func(root, s1 string) []layout.Place
		add    bool
	}{
		{"both formats", func(root, _ string) []layout.Place {
			return []layout.Place{{Format: layout.FormatJSONL, Root: root}, {Format: layout.FormatAgentUse, Root: root}}
		}, false},
		{"nested", func(root, s1 string) []layout.Place {
			return []layout.Place{{Format: layout.FormatJSONL, Root: root}, {Format: layout.FormatJSONL, Root: filepath.Dir(s1)}}
		}, false},
		{"nested, the other way", func(root, s1 string) []layout.Place {
			return []layout.Place{{Format: layout.FormatJSONL, Root: filepath.Dir(s1)}, {Format: layout.FormatJSONL, Root: root}}
		}, false},
		{"one for one", func(root, _ string) []layout.Place {
			return []layout.Place{{Format: layout.FormatJSONL, Root: root}}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, s1, _ := fixtureStore(t)
			// A file beside s1, found twice by the nested stores' walks.
			writeLines(t, filepath.Join(filepath.Dir(s1), "2026-03-01T08-00-00-000Z_s0-0000.jsonl"), []string{
				`{"type":"session","version":3,"id":"s0-0000","timestamp":"2026-03-01T08:00:00.000Z","cwd":"/home/dev/app"}`,
				userLine("b1", "", "2026-03-01T08:00:01.000Z", "a zebra beside"),
			})
			x := openIndex(t, Options{})
			q := Query{Text: "flaky OR zebra OR okapi", Stores: c.stores(root, s1)}
			if got := searchAll(t, x, q); len(got) == 0 {
				t.Fatal("no hits before")
			}
			if err := os.Remove(s1); err != nil {
				t.Fatal(err)
			}
			if c.add {
				writeLines(t, filepath.Join(filepath.Dir(s1), "2026-03-02T09-00-00-000Z_s3-0000.jsonl"), []string{
					`{"type":"session","version":3,"id":"s3-0000","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/home/dev/app"}`,
					userLine("n1", "", "2026-03-02T09:00:01.000Z", "nothing to see"),
				})
			}
			for _, h := range searchAll(t, x, q) {
				if h == "u1 user" || h == "a1 toolCall" {
					t.Errorf("a hit of the deleted file: %s", h)
				}
			}
			if ownEngine() && ownHasFile(t, x, s1) {
				t.Error("the own index still knows the deleted file")
			}
		})
	}
}
