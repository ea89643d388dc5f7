package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	generate "github.com/sessctl/sessctl/internal/workload"
)

// textStore writes n generated sessions with old mtimes and opens a store
// on them with its own cache directory.
func textStore(t *testing.T, n int) (dir, cache string, st *Store) {
	t.Helper()
	dir, cache = t.TempDir(), t.TempDir()
	if _, err := generate.Dir(dir, n, 6000, 35); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	st, err := OpenStore(context.Background(), StoreOptions{Dir: dir, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return dir, cache, st
}

// elements is the JSON of each info.
func elements(infos []Info) []string {
	out := make([]string, len(infos))
	for i := range infos {
		j, _ := infos[i].MarshalJSON()
		out[i] = string(j)
	}
	return out
}

// lazyList lists as sessctl list --json does: without texts, then the
// texts one at a time; errors are returned beside the elements.
func lazyList(t *testing.T, st *Store, infos []Info, o ListOptions) ([]string, []error) {
	t.Helper()
	var out []string
	var errs []error
	for in, err := range st.ListTexts(context.Background(), infos, o) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j, _ := in.MarshalJSON()
		out = append(out, string(j))
	}
	return out, errs
}

func listed(t *testing.T, st *Store, o ListOptions) []Info {
	t.Helper()
	infos, err := st.List(context.Background(), "", o)
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// A text index missing, damaged, foreign or stale gives the texts a scan
// gives, and the listing leaves it whole again (every entry valid, the
// next listing reads no session file for its texts).
func TestListTextsWithABadTextIndex(t *testing.T) {
	t.Parallel()
	damage := []struct {
		name string
		fn   func(t *testing.T, path string, data []byte) []byte
	}{
		{"missing", func(*testing.T, string, []byte) []byte { return nil }},
		{"empty", func(*testing.T, string, []byte) []byte { return []byte{} }},
		{"another directory's", func(_ *testing.T, _ string, data []byte) []byte {
			return bytes.Replace(data, []byte(`"dir":"`), []byte(`"dir":"/elsewhere`), 1)
		}},
		{"a text changed, its checksum not", func(_ *testing.T, _ string, data []byte) []byte {
			i := bytes.LastIndex(data, []byte(`,"text":"`))
			data[i+len(`,"text":"`)] ^= 1
			return data
		}},
		{"cut in the middle of a line", func(_ *testing.T, _ string, data []byte) []byte {
			return data[:len(data)-len(data)/3]
		}},
		{"no newline after the last line", func(_ *testing.T, _ string, data []byte) []byte {
			return data[:len(data)-1]
		}},
		{"a line of garbage", func(_ *testing.T, _ string, data []byte) []byte {
			nl := bytes.IndexByte(data, '\n')
			return slices.Concat(data[:nl+1], []byte("{{{ garbage\n"), data[nl+1:])
		}},
		{"stale entries", func(t *testing.T, path string, data []byte) []byte {
			// Every file changed since: the entries are for other stamps.
			dir := filepath.Dir(path)
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				p := filepath.Join(dir, e.Name())
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(`{"type":"message","id":"zz","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z","message":{"role":"user","content":"appended","timestamp":1777593600000}}` + "\n")
				f.Close()
				old := time.Now().Add(-30 * time.Minute)
				os.Chtimes(p, old, old)
			}
			return data
		}},
	}
	for _, c := range damage {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, cache, st := textStore(t, 6)
			// Built by a first listing.
			lazyList(t, st, listed(t, st, ListOptions{NoText: true}), ListOptions{})
			path := listTextPath(cache, dir)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if data = c.fn(t, dir+"/x", data); data == nil {
				os.Remove(path)
			} else if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			want := elements(listed(t, st, ListOptions{NoIndex: true}))
			for round := range 2 {
				got, errs := lazyList(t, st, listed(t, st, ListOptions{NoText: true}), ListOptions{})
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("round %d: the texts differ from a scan (-scan +got):\n%s", round, diff)
				}
			}
			// Whole again: an entry for every session, none damaged.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			offs, damaged := scanTexts(f, textHeader(dir))
			if damaged || len(offs) != 6 {
				t.Errorf("the text index after the listing: %d entries, damaged %v", len(offs), damaged)
			}
		})
	}
}

// The text index is kept as a listing that shows the texts keeps it: a
// first listing writes an entry for every file it read, and the next one
// takes every text from it, not from the files; NoIndex neither reads
// nor writes it.
func TestListTextsKeepTheTextIndex(t *testing.T) {
	t.Parallel()
	dir, cache, st := textStore(t, 5)
	path := listTextPath(cache, dir)
	lazyList(t, st, listed(t, st, ListOptions{NoIndex: true, NoText: true}), ListOptions{NoIndex: true})
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a listing without the index wrote the text index (%v)", err)
	}
	want := elements(listed(t, st, ListOptions{NoIndex: true}))
	got, errs := lazyList(t, st, listed(t, st, ListOptions{NoText: true}), ListOptions{})
	if len(errs) > 0 || !slices.Equal(want, got) {
		t.Fatalf("first listing: %v\n%s", errs, cmp.Diff(want, got))
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	offs, damaged := scanTexts(f, textHeader(dir))
	f.Close()
	if damaged || len(offs) != 5 {
		t.Fatalf("the first listing wrote %d text entries (damaged %v), want 5", len(offs), damaged)
	}
	before, _ := os.Stat(path)
	// The texts come from the index, not from the files: listed, then
	// changed, the files would give other texts.
	infos := listed(t, st, ListOptions{NoText: true})
	for i := range infos {
		p := infos[i].Path
		data, _ := os.ReadFile(p)
		k := bytes.LastIndex(data, []byte(`"text":"`)) + len(`"text":"`)
		data[k] ^= 1
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, errs = lazyList(t, st, infos, ListOptions{})
	if len(errs) > 0 || !slices.Equal(want, got) {
		t.Fatalf("the texts were not taken from the index: %v\n%s", errs, cmp.Diff(want, got))
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Error("a listing served from a valid text index rewrote it")
	}
}

// A file that changes between the listing and the reading of its text
// gives a consistent record. Its text is that of the state listed when
// it is at hand: in the text index (the entry for the stamp listed), or
// at the start of the file (appended to since: the lines added are left
// out, as they are out of the other fields). Otherwise a file rewritten
// is given as it is now, a file deleted gives its error (the listing
// goes on), a file no longer a session is left out.
func TestListTextsOfFilesChangedSinceListed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"no index", "index without texts", "index with texts"} {
		dir, _, st := textStore(t, 6)
		o := ListOptions{NoIndex: mode == "no index"}
		if mode == "index with texts" {
			lazyList(t, st, listed(t, st, ListOptions{NoText: true}), o)
		}
		full := listed(t, st, ListOptions{NoIndex: true})
		infos := listed(t, st, ListOptions{NoIndex: o.NoIndex, NoText: true})
		names := make([]string, 0, len(infos))
		for i := range full {
			names = append(names, filepath.Base(full[i].Path))
		}
		slices.Sort(names)
		appended, rewritten, deleted, notSession := names[0], names[1], names[2], names[3]
		p := func(n string) string { return filepath.Join(dir, n) }
		f, err := os.OpenFile(p(appended), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"message","id":"zz","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z","message":{"role":"user","content":"appended since","timestamp":1777593600000}}` + "\n")
		f.Close()
		// Rewritten: another session's bytes under this name.
		other, _ := os.ReadFile(p(names[4]))
		if err := os.WriteFile(p(rewritten)+".tmp", other, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p(rewritten)+".tmp", p(rewritten)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p(deleted)); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p(notSession))
		if err := os.WriteFile(p(notSession), bytes.Replace(data, []byte(`"type":"session"`), []byte(`"type":"sessio_"`), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		now := elements(listed(t, st, ListOptions{NoIndex: true}))
		nowOf := func(n string) string {
			for _, e := range now {
				if strings.Contains(e, `"path":`+strconvQuote(p(n))) {
					return e
				}
			}
			return ""
		}
		var want []string
		for i, e := range elements(full) {
			switch n := filepath.Base(full[i].Path); {
			case mode == "index with texts":
				want = append(want, e) // every text at hand, as listed
			case n == rewritten:
				want = append(want, nowOf(rewritten))
			case n == deleted || n == notSession:
			default:
				want = append(want, e)
			}
		}
		got, errs := lazyList(t, st, infos, o)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the texts of files changed since listed (-want +got):\n%s", mode, diff)
		}
		if mode == "index with texts" {
			if len(errs) > 0 {
				t.Errorf("%s: errors %v", mode, errs)
			}
		} else if len(errs) != 1 || !errors.Is(errs[0], fs.ErrNotExist) || !strings.Contains(errs[0].Error(), deleted) {
			t.Errorf("%s: errors %v, want the deleted file's", mode, errs)
		}
		if !strings.Contains(nowOf(appended), "appended since") || strings.Contains(strings.Join(got, ""), "appended since") {
			t.Errorf("%s: the line appended since is in the listing given", mode)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// With more directories than text indexes kept open, each is opened for
// each use: the texts and the indexes are the same.
func TestListTextsOfManyDirectories(t *testing.T) {
	t.Parallel()
	root, cache := t.TempDir(), t.TempDir()
	n := maxOpenTexts + 6
	old := time.Now().Add(-time.Hour)
	for i := range n {
		sub := filepath.Join(root, fmt.Sprintf("d%03d", i))
		if _, err := generate.Dir(sub, 1+i%2, 3000, uint64(i)); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(sub)
		for _, e := range ents {
			os.Chtimes(filepath.Join(sub, e.Name()), old, old)
		}
	}
	st, err := OpenStore(context.Background(), StoreOptions{Dir: root, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	want := elements(listed(t, st, ListOptions{NoIndex: true}))
	for round := range 3 {
		if round == 2 { // one text index damaged
			p := listTextPath(cache, filepath.Join(root, "d007"))
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-5], 0o600)
		}
		got, errs := lazyList(t, st, listed(t, st, ListOptions{NoText: true}), ListOptions{})
		if len(errs) > 0 || !slices.Equal(want, got) {
			t.Fatalf("round %d: %v\n%s", round, errs, cmp.Diff(want, got))
		}
	}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i))
		f, err := os.Open(listTextPath(cache, dir))
		if err != nil {
			t.Fatal(err)
		}
		offs, damaged := scanTexts(f, textHeader(dir))
		f.Close()
		if damaged || len(offs) != 1+i%2 {
			t.Errorf("%s: text index of %d entries (damaged %v), want %d", dir, len(offs), damaged, 1+i%2)
		}
	}
}

// A loop left early, or a context done, leaves no temporary file in the
// cache and no text index half written; a context done ends the
// iteration with its error.
func TestListTextsLeftEarly(t *testing.T) {
	t.Parallel()
	dir, cache, st := textStore(t, 5)
	infos := listed(t, st, ListOptions{NoText: true})
	for range st.ListTexts(context.Background(), infos, ListOptions{}) {
		break
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error
	n := 0
	for in, err := range st.ListTexts(ctx, infos, ListOptions{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if in.AllMessagesText() == "" {
			t.Error("an info without its text")
		}
		n++
		cancel()
	}
	if n != 1 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("after cancel: %d infos, errors %v; want 1 and the context's", n, errs)
	}
	ents, _ := os.ReadDir(filepath.Join(cache, "list-index"))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") || strings.HasSuffix(e.Name(), ".text") {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
	if _, err := os.Stat(listTextPath(cache, dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a text index was put in place by a loop left early (%v)", err)
	}
}
