package repair_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/testenv"
)

const vHeader = testenv.PiHeader

var (
	vEntry = testenv.PiMessage
	lines  = testenv.Lines
)

// verifyKinds verifies path and returns the sorted distinct problem kinds
// and whether the file passed.
func verifyKinds(t *testing.T, path string) ([]string, bool) {
	t.Helper()
	rep, err := repair.VerifyFile(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, p := range rep.Problems {
		set[p.Kind] = true
		if p.Message == "" {
			t.Errorf("finding %+v has no message", p)
		}
	}
	kinds := []string{}
	for k := range set {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if rep.OK != (len(kinds) == 0) {
		t.Errorf("ok = %v with problems %v", rep.OK, kinds)
	}
	return kinds, rep.OK
}

// repairAndCheck repairs path into a new file, checks that the original
// is untouched and that the result passes Verify, and returns the
// result's path and what File reported.
func repairAndCheck(t *testing.T, path string) (string, *repair.Result) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "repaired.jsonl")
	res, err := repair.File(path, repair.Options{Output: out})
	if err != nil {
		t.Fatalf("repair %s: %v", path, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("repair modified the original %s", path)
	}
	if res.Output == nil || *res.Output != out || !res.Changed {
		t.Fatalf("repair output = %v (changed %v), want %s", res.Output, res.Changed, out)
	}
	if kinds, ok := verifyKinds(t, out); !ok {
		data, _ := os.ReadFile(out)
		t.Fatalf("repaired file fails verify with %v:\n%s", kinds, data)
	}
	return out, res
}

// branchIDs opens path read-only and returns the ids on the leaf's
// branch, root first.
func branchIDs(t *testing.T, path string) []string {
	t.Helper()
	s, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for _, e := range s.BranchPath("") {
		ids = append(ids, e.ID)
	}
	return ids
}

func TestVerifyAndRepairCrafted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string // file name; default broken.jsonl
		data    string
		want    []string // problem kinds
		branch  []string // ids on the repaired file's active branch, when checked
		changes []string // kinds of changes repair reports, when checked
	}{
		{name: "valid", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a")), want: []string{}},
		{name: "empty", data: "", want: []string{"empty"}, branch: []string{}, changes: []string{"added-header"}},
		{name: "whitespace only", data: " \n\n", want: []string{"empty"}},
		{name: "no header", data: lines(vEntry("a", ""), vEntry("b", "a")), want: []string{"no-header"},
			branch: []string{"a", "b"}, changes: []string{"added-header"}},
		{name: "header id from pi file name", file: "2026-03-01T09-00-00-123Z_0f0f0f0f-0000-4000-8000-000000000001.jsonl",
			data: lines(vEntry("a", "")), want: []string{"no-header"}, branch: []string{"a"}},
		{name: "header below entries", data: lines(vEntry("a", ""), vHeader, vEntry("b", "a")), want: []string{"no-header"},
			branch: []string{"a", "b"}, changes: []string{"moved-header"}},
		{name: "numeric header id", data: lines(`{"type":"session","version":3,"id":12345,"timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`, vEntry("a", "")),
			want: []string{"bad-header"}, branch: []string{"a"}, changes: []string{"added-header", "dropped-header"}},
		{name: "newer version", data: lines(`{"type":"session","version":4,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`, vEntry("a", "")),
			want: []string{"version"}},
		{name: "extra header", data: lines(vHeader, vEntry("a", ""), vHeader, vEntry("b", "a")), want: []string{"extra-header"},
			branch: []string{"a", "b"}, changes: []string{"dropped-header"}},
		{name: "malformed line", data: lines(vHeader, vEntry("a", ""), `{"type":"message","id":"b","parentId":"a","timest`, vEntry("c", "b")),
			want: []string{"malformed", "missing-parent"}, branch: []string{"a", "c"}, changes: []string{"dropped-line", "reparented"}},
		{name: "garbage line", data: lines(vHeader, vEntry("a", ""), "not json at all", vEntry("b", "a")),
			want: []string{"malformed"}, branch: []string{"a", "b"}, changes: []string{"dropped-line"}},
		{name: "not an object", data: lines(vHeader, "42", vEntry("a", ""), "[1,2]", "null", `"s"`, vEntry("b", "a")),
			want: []string{"not-object"}, branch: []string{"a", "b"}},
		{name: "torn tail", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a")) + `{"type":"message","id":"c","par`,
			want: []string{"torn-tail"}, branch: []string{"a", "b"}, changes: []string{"cut-torn-tail"}},
		{name: "no final newline", data: strings.TrimSuffix(lines(vHeader, vEntry("a", ""), vEntry("b", "a")), "\n"),
			want: []string{"no-final-newline"}, branch: []string{"a", "b"}, changes: []string{"added-newline"}},
		{name: "glued lines", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a")+vEntry("c", "b")),
			want: []string{"malformed"}, branch: []string{"a", "b", "c"}, changes: []string{"split-line"}},
		{name: "torn line with an entry glued on", data: lines(vHeader, vEntry("a", ""), `{"type":"message","id":"b","parentId":"a","timest`+vEntry("c", "a")),
			want: []string{"malformed"}, branch: []string{"a", "c"}, changes: []string{"split-line"}},
		{name: "entry without id", data: lines(vHeader, vEntry("a", ""), `{"type":"message","parentId":"a","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"x"}}`),
			want: []string{"bad-id"}, changes: []string{"added-id"}},
		{name: "numeric id", data: lines(vHeader, vEntry("a", ""), `{"type":"message","id":7,"parentId":"a","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"x"}}`),
			want: []string{"bad-id"}, changes: []string{"added-id"}},
		{name: "duplicate id", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a"), vEntry("c", "b"), strings.Replace(vEntry("b", "c"), "text of", "other", 1), vEntry("d", "b")),
			want: []string{"cycle", "duplicate-id"}, changes: []string{"renamed-duplicate", "updated-reference"}},
		{name: "exact duplicate line", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a"), vEntry("b", "a"), vEntry("c", "b")),
			want: []string{"duplicate-id"}, branch: []string{"a", "b", "c"}, changes: []string{"dropped-duplicate"}},
		{name: "missing parent", data: lines(vHeader, vEntry("a", ""), vEntry("b", "a"), vEntry("c", "gone")),
			want: []string{"missing-parent"}, branch: []string{"a", "b", "c"}, changes: []string{"reparented"}},
		{name: "no parentId", data: lines(vHeader, vEntry("a", ""), `{"type":"message","id":"b","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"x"}}`),
			want: []string{"bad-parent"}, branch: []string{"a", "b"}, changes: []string{"reparented"}},
		{name: "numeric parentId", data: lines(vHeader, vEntry("a", ""), `{"type":"message","id":"b","parentId":5,"timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"x"}}`),
			want: []string{"bad-parent"}, branch: []string{"a", "b"}, changes: []string{"reparented"}},
		{name: "self parent", data: lines(vHeader, vEntry("a", ""), vEntry("b", "b")),
			want: []string{"self-parent"}, branch: []string{"a", "b"}, changes: []string{"reparented"}},
		{name: "cycle", data: lines(vHeader, vEntry("r", ""), vEntry("a", "c"), vEntry("b", "a"), vEntry("c", "b")),
			want: []string{"cycle"}, branch: []string{"r", "a", "b", "c"}, changes: []string{"reparented"}},
		{name: "everything at once", data: lines("garbage", vEntry("a", ""), vHeader, vEntry("b", "a"), vEntry("b", "zz"), vEntry("c", "c"), "[]", vHeader) + `{"type":"mess`,
			want: []string{"duplicate-id", "extra-header", "malformed", "missing-parent", "no-header", "not-object", "self-parent", "torn-tail"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := tc.file
			if name == "" {
				name = "broken.jsonl"
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			kinds, ok := verifyKinds(t, path)
			if diff := cmp.Diff(tc.want, kinds); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if ok != (len(tc.want) == 0) {
				t.Errorf("verify ok = %v, want %v", ok, len(tc.want) == 0)
			}
			if len(tc.want) == 0 {
				res, err := repair.File(path, repair.Options{})
				if err != nil || res.Output != nil || res.Changed {
					t.Errorf("repair of a valid file: %+v, %v; want nothing written", res, err)
				}
				return
			}
			if tc.name == "newer version" {
				target := filepath.Join(t.TempDir(), "x.jsonl")
				_, err := repair.File(path, repair.Options{Output: target})
				var ve *engine.VersionError
				if !errors.Is(err, engine.ErrUnsupportedVersion) || !errors.As(err, &ve) {
					t.Errorf("repair of a newer version: %v; want a VersionError", err)
				}
				if _, err := os.Stat(target); err == nil {
					t.Errorf("repair of a newer version wrote %s", target)
				}
				return
			}
			out, res := repairAndCheck(t, path)
			if tc.branch != nil {
				got := branchIDs(t, out)
				if got == nil {
					got = []string{}
				}
				if diff := cmp.Diff(tc.branch, got); diff != "" {
					t.Errorf("repaired branch (-want +got):\n%s", diff)
				}
			}
			have := map[string]bool{}
			for _, c := range res.Changes {
				have[c.Kind] = true
			}
			for _, k := range tc.changes {
				if !have[k] {
					t.Errorf("repair did not report %q; it reported %+v", k, res.Changes)
				}
			}
			if tc.file != "" {
				s, err := engine.OpenFile(context.Background(), out, engine.OpenOptions{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				h := s.Header()
				s.Close()
				if h.ID != "0f0f0f0f-0000-4000-8000-000000000001" || h.Timestamp != "2026-03-01T09:00:00.123Z" || h.Cwd != "" {
					t.Errorf("header from the file name: id %q, timestamp %q, cwd %q", h.ID, h.Timestamp, h.Cwd)
				}
			}
		})
	}
}

// TestRepairDeterministic repairs the same bytes twice.
func TestRepairDeterministic(t *testing.T) {
	t.Parallel()
	data := lines(vEntry("a", ""), vEntry("a", ""), strings.Replace(vEntry("a", "a"), "text", "other", 1), vEntry("b", "gone"))
	var outs [][]byte
	for range 2 {
		path := filepath.Join(t.TempDir(), "broken.jsonl")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := repairAndCheck(t, path)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if diff := cmp.Diff(string(outs[0]), string(outs[1])); diff != "" {
		t.Errorf("two repairs differ:\n%s", diff)
	}
}

// TestVerifyCorpus runs verify over every file of the pi corpus. The
// files pi wrote or loads as they are pass; the ones the corpus damaged
// on purpose (or that pi's bugs damaged) fail with exactly these
// problems, and repair turns each into a file that passes.
func TestVerifyCorpus(t *testing.T) {
	t.Parallel()
	dir := testenv.Corpus(t, "pi", "cases")
	damaged := map[string][]string{
		// pi glued its next append onto a line without a newline.
		"append-after-bad-tail/after-append/no-final-newline.jsonl": {"malformed"},
		"append-after-bad-tail/after-append/truncated-tail.jsonl":   {"malformed"},
		"append-after-bad-tail/no-final-newline.jsonl":              {"no-final-newline"},
		"append-after-bad-tail/truncated-tail.jsonl":                {"torn-tail"},
		// Garbage before the header: pi loads it, but the line is damage.
		"continue-recent/session-dir/garbage-first-line.jsonl": {"malformed"},
		"continue-recent/session-dir/not-a-session.jsonl":      {"bad-parent", "no-header"},
		"corrupt-or-empty/empty.jsonl":                         {"empty"},
		"corrupt-or-empty/garbage.jsonl":                       {"malformed", "no-header"},
		"corrupt-or-empty/no-header.jsonl":                     {"missing-parent", "no-header"},
		"corrupt-or-empty/numeric-id-header.jsonl":             {"bad-header"},
		// pi's duplicate-header bug, and the copies it makes.
		"duplicate-header-bug/forked.jsonl":                   {"duplicate-id", "extra-header"},
		"duplicate-header-bug/recovered.jsonl":                {"extra-header"},
		"list-dir/session-dir/empty.jsonl":                    {"empty"},
		"list-dir/session-dir/first-message-not-header.jsonl": {"no-header"},
		"list-dir/session-dir/garbage-first.jsonl":            {"malformed"},
		// Garbage, a truncated line, CRLF and an unknown type: the first
		// two are damage, the others only notes.
		"malformed-lines/input.jsonl": {"malformed"},
	}
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f, err := range st.Files(context.Background()) {
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
		files = append(files, f.Path)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d corpus files under %s", len(files), dir)
	}
	seen := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			want, bad := damaged[rel]
			if !bad {
				want = []string{}
			}
			kinds, _ := verifyKinds(t, f)
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if bad {
				// Repair a copy: the corpus is read-only data.
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				cp := filepath.Join(t.TempDir(), filepath.Base(f))
				if err := os.WriteFile(cp, data, 0o600); err != nil {
					t.Fatal(err)
				}
				repairAndCheck(t, cp)
			}
		})
	}
	for rel := range damaged {
		if !seen[rel] {
			t.Errorf("corpus file %s is gone; update the table", rel)
		}
	}
}

// TestFileBeside checks the default output name, its mode, and that File
// never overwrites: not an existing file, not the original.
func TestFileBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := lines(vHeader, vEntry("a", ""), "junk")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.UnixMilli(1772355600000) }
	want := filepath.Join(dir, "s.repaired-1772355600000.jsonl")
	for _, next := range []string{want, filepath.Join(dir, "s.repaired-1772355600001.jsonl")} {
		res, err := repair.File(path, repair.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Output == nil || *res.Output != next {
			t.Fatalf("output %v, want %s (the next free name)", res.Output, next)
		}
		// Windows has no permission bits (os.Stat says 0666 for a
		// writable file); ACLs protect the file there.
		if fi, err := os.Stat(next); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
			t.Errorf("repaired file mode: %v, %v", fi, err)
		}
	}
	for _, target := range []string{want, path} {
		if _, err := repair.File(path, repair.Options{Output: target}); !errors.Is(err, os.ErrExist) {
			t.Errorf("File with Output %s: %v; want fs.ErrExist", target, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != data {
		t.Errorf("the original changed")
	}
}

// TestSalvageCorruptOpen is the package example: a file engine.OpenFile
// refuses as corrupt opens after repair.File, with its entries.
func TestSalvageCorruptOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(vEntry("a", ""), vEntry("b", "a"))), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := engine.OpenFile(ctx, path, engine.OpenOptions{ReadOnly: true}); !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("Open of a file without a header: %v, want ErrCorrupt", err)
	}
	s, err := salvage(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	file := s.SessionFile()
	s.Close()
	if diff := cmp.Diff([]string{"a", "b"}, branchIDs(t, file)); diff != "" {
		t.Errorf("salvaged branch (-want +got):\n%s", diff)
	}
}

// TestRepairBytes checks Repair on bytes alone: the made-up header takes
// the time given, and the result passes Verify.
func TestRepairBytes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	data := []byte(`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}` + "\n")
	out, res, err := repair.Repair("/nowhere/s.jsonl", data, now)
	if err != nil {
		t.Fatal(err)
	}
	if rep := repair.Verify("out", out); !rep.OK {
		t.Errorf("result fails Verify: %+v\n%s", rep.Problems, out)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if !strings.Contains(first, `"timestamp":"2026-03-01T09:00:00.000Z"`) {
		t.Errorf("made-up header %s does not carry the time given", first)
	}
	if res.Entries != 1 || len(res.Changes) != 1 || res.Changes[0].Kind != "added-header" || res.Output != nil {
		t.Errorf("result %+v", res)
	}
}

// TestVerifyKnowsPi16Types: pi 1.x's usage and context_edit entries are
// its own, not of an unknown type.
func TestVerifyKnowsPi16Types(t *testing.T) {
	t.Parallel()
	data := `{"type":"session","version":3,"id":"s","timestamp":"2026-11-20T09:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-20T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"usage","id":"b","parentId":"a","timestamp":"2026-11-20T09:00:02.000Z","kind":"title","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}
{"type":"context_edit","id":"c","parentId":"b","timestamp":"2026-11-20T09:00:03.000Z","targetId":"a","replacement":null}
`
	rep := repair.Verify("pi16.jsonl", []byte(data))
	for _, n := range append(rep.Notes, rep.Problems...) {
		if n.Kind == "unknown-type" {
			t.Errorf("verify: %s", n.Message)
		}
	}
	if !rep.OK {
		t.Errorf("verify: not OK: %+v", rep.Problems)
	}
}
