package engine_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/testenv"
)

// sessionWithIDs returns a session in memory of one message per id.
func sessionWithIDs(t *testing.T, ids ...string) *engine.Session {
	t.Helper()
	n := 0
	s := inMemory(t, "/p", engine.StoreOptions{NewEntryID: func() string { n++; return ids[n-1] }})
	for range ids {
		if _, err := s.AppendMessage(raw(`{"role":"user","content":"x","timestamp":1772355600000}`)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestResolveEntry(t *testing.T) {
	t.Parallel()
	s := sessionWithIDs(t, "abcd0001", "abcd0002", "ffff0003")
	tests := []struct {
		arg, want, err string
		is             error
	}{
		{arg: "abcd0002", want: "abcd0002"},
		{arg: "ff", want: "ffff0003"},
		{arg: "FFFF", want: "ffff0003"},
		{arg: "abcd", err: `entry "abcd" is ambiguous: it is a prefix of abcd0001, abcd0002`, is: engine.ErrAmbiguous},
		{arg: "abce0001", err: `entry "abce0001" not found; did you mean abcd0001, abcd0002?`, is: engine.ErrNotFound},
		{arg: "fffe0003", err: `entry "fffe0003" not found; did you mean ffff0003?`, is: engine.ErrNotFound},
		{arg: "abdc000", err: `entry "abdc000" not found; did you mean abcd0001, abcd0002?`, is: engine.ErrNotFound},
		{arg: "12345678", err: `entry "12345678" not found`, is: engine.ErrNotFound},
		{arg: "", err: `entry "" not found`, is: engine.ErrNotFound},
	}
	for _, tc := range tests {
		got, err := s.ResolveEntry(tc.arg)
		if tc.err != "" {
			var ee *engine.EntryError
			if err == nil || err.Error() != tc.err || !errors.Is(err, tc.is) || !errors.As(err, &ee) {
				t.Errorf("ResolveEntry(%q) = %v, want %q matching %v", tc.arg, err, tc.err, tc.is)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveEntry(%q) = %q, %v, want %q", tc.arg, got, err, tc.want)
		}
	}
}

// writeStoreFile writes a session file with just a header.
func writeStoreFile(t *testing.T, path, id string) {
	t.Helper()
	testenv.WriteFile(t, path, `{"type":"session","version":3,"id":"`+id+`","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}`+"\n")
}

// TestResolveSession names sessions of a store by path, id and id
// prefix (Store.Resolve).
func TestResolveSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "--p--", "2026-03-01T09-00-00-000Z_aaaa1111-0000-4000-8000-000000000001.jsonl")
	b := filepath.Join(dir, "--p--", "2026-03-01T09-00-01-000Z_aaaa2222-0000-4000-8000-000000000002.jsonl")
	c := filepath.Join(dir, "other", "named.jsonl") // the id comes from the header
	trashed := filepath.Join(dir, "--p--", ".trash", "2026-03-01T09-00-02-000Z_bbbb0000-0000-4000-8000-000000000003.jsonl")
	writeStoreFile(t, a, "aaaa1111-0000-4000-8000-000000000001")
	writeStoreFile(t, b, "aaaa2222-0000-4000-8000-000000000002")
	writeStoreFile(t, c, "CCCC3333")
	writeStoreFile(t, trashed, "bbbb0000-0000-4000-8000-000000000003")
	tests := []struct {
		name, want string
		is         error
		cands      []errs.Candidate
	}{
		{name: a, want: a},
		{name: "aaaa1111-0000-4000-8000-000000000001", want: a},
		{name: "aaaa2", want: b},
		{name: "AAAA2", want: b},
		{name: "cccc", want: c},
		{name: "aaaa", is: engine.ErrAmbiguous, cands: []errs.Candidate{
			{ID: "aaaa1111-0000-4000-8000-000000000001", Path: a},
			{ID: "aaaa2222-0000-4000-8000-000000000002", Path: b},
		}},
		{name: "bbbb", is: engine.ErrNotFound}, // deleted sessions are not looked in
		{name: filepath.Join(dir, "missing.jsonl"), is: engine.ErrNotFound},
		{name: "", is: engine.ErrNotFound},
	}
	st := openStore(t, engine.StoreOptions{Dir: dir})
	for _, tc := range tests {
		got, err := st.Resolve(t.Context(), tc.name)
		if got != tc.want || !errors.Is(err, tc.is) || (tc.is == nil) != (err == nil) {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.is)
		}
		var amb *engine.AmbiguousError
		if errors.As(err, &amb) {
			if diff := cmp.Diff(tc.cands, amb.Candidates); diff != "" {
				t.Errorf("Resolve(%q) candidates (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	if _, err := openStore(t, engine.StoreOptions{Dir: filepath.Join(dir, "nowhere")}).Resolve(t.Context(), "x"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a missing store: %v, want ErrNotFound", err)
	}
}
