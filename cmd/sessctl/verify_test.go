package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

const vHeader = `{"type":"session","version":3,"id":"5e55-v","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`

// vEntry is a user message entry; parent "" writes null.
func vEntry(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"text of %s","timestamp":1}}`, id, p, id)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// verifyKinds runs verify --json on path and returns the sorted distinct
// problem kinds and the exit code.
func verifyKinds(t *testing.T, path string) ([]string, int) {
	t.Helper()
	out, errOut, code := runCLI(t, "verify", "--json", path)
	if code != exitOK && code != exitCorrupt {
		t.Fatalf("verify %s: exit %d: %s", path, code, errOut)
	}
	var rep verifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json output %q: %v", out, err)
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
	return kinds, code
}

// repairAndCheck repairs path into a new file, checks that the original
// is untouched and that the result passes verify, and returns the
// result's path and what repair reported.
func repairAndCheck(t *testing.T, path string) (string, repairResult) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "repaired.jsonl")
	stdout, errOut, code := runCLI(t, "repair", "--json", "-o", out, path)
	if code != exitOK {
		t.Fatalf("repair %s: exit %d: %s", path, code, errOut)
	}
	var res repairResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("repair --json output %q: %v", stdout, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("repair modified the original %s", path)
	}
	if res.Output == nil || *res.Output != out {
		t.Fatalf("repair output = %v, want %s", res.Output, out)
	}
	if kinds, code := verifyKinds(t, out); code != exitOK {
		data, _ := os.ReadFile(out)
		t.Fatalf("repaired file fails verify with %v:\n%s", kinds, data)
	}
	return out, res
}

// branchIDs opens path read-only and returns the ids on the leaf's
// branch, root first.
func branchIDs(t *testing.T, path string) []string {
	t.Helper()
	s, err := engine.Open(context.Background(), path, engine.Options{ReadOnly: true})
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
			name := tc.file
			if name == "" {
				name = "broken.jsonl"
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			kinds, code := verifyKinds(t, path)
			if diff := cmp.Diff(tc.want, kinds); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			wantCode := exitCorrupt
			if len(tc.want) == 0 {
				wantCode = exitOK
			}
			if code != wantCode {
				t.Errorf("verify exit %d, want %d", code, wantCode)
			}
			if len(tc.want) == 0 {
				out, _, code := runCLI(t, "repair", path)
				if code != exitOK || !strings.Contains(out, "nothing to repair") {
					t.Errorf("repair of a valid file: exit %d, %q", code, out)
				}
				return
			}
			if tc.name == "newer version" {
				_, errOut, code := runCLI(t, "repair", "-o", filepath.Join(t.TempDir(), "x.jsonl"), path)
				if code != exitCorrupt || !strings.Contains(errOut, "hint:") {
					t.Errorf("repair of a newer version: exit %d, stderr %q; want 4 with a hint", code, errOut)
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
				s, err := engine.Open(context.Background(), out, engine.Options{ReadOnly: true})
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

// TestRepairBeside checks the default output name and that repair never
// overwrites.
func TestRepairBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(vHeader, vEntry("a", ""), "junk")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "repair", path)
	if code != exitOK {
		t.Fatalf("repair: exit %d: %s", code, errOut)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "s.repaired-*.jsonl"))
	if len(matches) != 1 || !strings.Contains(out, matches[0]) {
		t.Fatalf("repaired files %v, output %q", matches, out)
	}
	if fi, err := os.Stat(matches[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("repaired file mode: %v, %v", fi, err)
	}
	// -o naming an existing file, or the original itself, is refused.
	for _, target := range []string{matches[0], path} {
		if _, _, code := runCLI(t, "repair", "-o", target, path); code == exitOK {
			t.Errorf("repair -o %s succeeded; it must not overwrite", target)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != lines(vHeader, vEntry("a", ""), "junk") {
		t.Errorf("the original changed")
	}
}

// TestVerifyCorpus runs verify over every file of the pi corpus. The
// files pi wrote or loads as they are pass; the ones the corpus damaged
// on purpose (or that pi's bugs damaged) fail with exactly these
// problems, and repair turns each into a file that passes.
func TestVerifyCorpus(t *testing.T) {
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
	files, err := sessionFilesUnder(dir)
	if err != nil {
		t.Fatal(err)
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
	// The whole corpus at once: exit 4, one JSON object per file.
	out, _, code := runCLI(t, "verify", "--json", dir)
	if code != exitCorrupt {
		t.Errorf("verify of the corpus directory: exit %d, want 4", code)
	}
	if n := strings.Count(out, "\n"); n != len(files) {
		t.Errorf("verify --json printed %d lines for %d files", n, len(files))
	}
}
