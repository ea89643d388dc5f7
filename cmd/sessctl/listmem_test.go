package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/testenv"
)

// writeTextStore writes n sessions of about size bytes each into dir,
// nearly all of it message text (what list --json prints), dated an
// hour ago (old enough for the list index), in a few subdirectories.
func writeTextStore(t *testing.T, dir string, n, size int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 35))
	words := strings.Fields("the session store lists every message text once a go program reads the index with care \\\"quoted\\\" é 😀 line\\nbreak")
	old := time.Now().Add(-time.Hour)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("cwd-%d", i%4))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(sub, fmt.Sprintf("s-%d-%05d.jsonl", seed, i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, `{"type":"session","version":3,"id":"%08x-0000-4000-8000-%012d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p%d"}`+"\n", seed, i, i%4)
		written := 0
		for m := 0; written < size; m++ {
			var text strings.Builder
			for text.Len() < 2000 {
				text.WriteString(words[r.IntN(len(words))])
				text.WriteByte(' ')
			}
			role := []string{"user", "assistant"}[m%2]
			ts := 1767225600000 + int64(i)*60000 + int64(m)
			line := fmt.Sprintf(`{"type":"message","id":"m%06d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"%s","content":"%s","timestamp":%d}}`+"\n", m, role, text.String(), ts)
			w.WriteString(line)
			written += len(line)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// oldListJSON is what list --json printed before the texts were taken
// one at a time: the listing with its texts, sorted, rendered whole.
func oldListJSON(t *testing.T, store string, noIndex bool) []byte {
	t.Helper()
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: store})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.List(context.Background(), "", engine.ListOptions{NoIndex: noIndex})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Join(render.ListJSON(infos), nil)
}

// list --json holds one session's text at a time (issue 35): its peak
// heap grows by a small fraction of a byte for each byte of the texts it
// prints, where it held them all (and, from the list index, all of its
// text file besides): 769-893 MiB for a 4 GB store. Each mode (the
// first listing, which builds the index; a listing from the index;
// --no-index) runs on a store of about 16 MB and one of 64 MB (64 and
// 256 MB with the crash tag); the growth of the peak heap between them,
// per byte of JSON printed, must stay under 0.25. Measured as peak heap
// (see peakHeap), never as time. The output is the same as the old
// path's, byte for byte.
func TestListJSONMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB of sessions")
	}
	const perSession = 200 << 10
	counts := []int{80, 320}
	if testenv.Stress() {
		counts = []int{320, 1280}
	}
	root := t.TempDir()
	var stores [2]string
	for i, n := range counts {
		stores[i] = filepath.Join(root, fmt.Sprint(i))
		writeTextStore(t, stores[i], n, perSession, uint64(i+1))
	}
	t.Setenv("PI_CODING_AGENT_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// The same bytes as the old path, with and without the index (built
	// by the first, taken by the second).
	for _, args := range [][]string{{"--no-index"}, {}, {}} {
		want := oldListJSON(t, stores[0], len(args) > 0)
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"list", "--json", "--store", stores[0]}, args...), strings.NewReader(""), &out, &errb)
		if code != exitOK || !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("list --json %v: exit %d (%s), output differs from the old path's (%d bytes, want %d)", args, code, errb.String(), out.Len(), len(want))
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var sizes [2]int64
	for i, s := range stores {
		var cw countWriter
		if code := run(context.Background(), []string{"list", "--json", "--no-index", "--store", s}, strings.NewReader(""), &cw, io.Discard); code != exitOK {
			t.Fatalf("list --json --no-index %s: exit %d", s, code)
		}
		sizes[i] = cw.n
	}
	for _, mode := range []string{"first", "from the index", "--no-index"} {
		var peaks [2]uint64
		for i, s := range stores {
			args := []string{"list", "--json", "--store", s}
			if mode == "--no-index" {
				args = append(args, "--no-index")
			}
			var code int
			peaks[i] = peakHeap(func() {
				code = run(context.Background(), slices.Clone(args), strings.NewReader(""), io.Discard, io.Discard)
			})
			if code != exitOK {
				t.Fatalf("%v: exit %d", args, code)
			}
		}
		growth := (float64(peaks[1]) - float64(peaks[0])) / float64(sizes[1]-sizes[0])
		t.Logf("list --json, %s: peak heap %.1f MB for %.1f MB printed, %.1f MB for %.1f MB: %.3f bytes a byte", mode,
			float64(peaks[0])/(1<<20), float64(sizes[0])/(1<<20), float64(peaks[1])/(1<<20), float64(sizes[1])/(1<<20), growth)
		if growth > 0.25 {
			t.Errorf("list --json, %s: the peak heap grows by %.3f bytes for each byte printed, more than 0.25", mode, growth)
		}
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// list --all --json prints pi's listAll (the conformance corpus's
// list-all case), whether the texts come from the files, from the list
// index, or from a text index that is damaged.
func TestListJSONIsPisListAll(t *testing.T) {
	corpus := testenv.Corpus(t, "pi", "cases", "list-all")
	data, err := os.ReadFile(filepath.Join(corpus, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		List any `json:"list"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	copyTree(t, corpus, root)
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(root, "agent"))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	check := func(what string, args ...string) {
		t.Helper()
		out, errOut, code := runCLI(t, append([]string{"list", "--all", "--json"}, args...)...)
		var got any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(out, root, "/__ROOT__")), &got); err != nil || code != exitOK {
			t.Fatalf("%s: exit %d, %v, %s", what, code, err, errOut)
		}
		if diff := cmp.Diff(exp.List, got); diff != "" {
			t.Errorf("%s: list --all --json differs from pi's listAll (-pi +sessctl):\n%s", what, diff)
		}
	}
	check("no index", "--no-index")
	check("first listing")
	check("from the index")
	texts, _ := filepath.Glob(filepath.Join(cache, "sessctl", "list-index", "*.text"))
	if len(texts) == 0 {
		t.Fatal("no text index written")
	}
	for _, p := range texts {
		data, _ := os.ReadFile(p)
		if i := bytes.LastIndex(data, []byte(`,"text":"`)); i >= 0 {
			data[i+len(`,"text":"`)] ^= 1
		}
		os.WriteFile(p, data, 0o600)
	}
	check("from a damaged text index")
	check("from the index mended")
}
