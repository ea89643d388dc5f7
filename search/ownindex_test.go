package search

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// ownEngine reports whether the suite runs against EngineOwn.
func ownEngine() bool { return defaultEngine == EngineOwn }

// skipOwn skips a test of FTS5's internals when the suite runs against
// the own engine.
func skipOwn(t *testing.T, why string) {
	t.Helper()
	if ownEngine() {
		t.Skip("EngineOwn: " + why)
	}
}

// indexDataFiles returns the files of the index in dir that a damage
// test damages: FTS5's databases, or the own engine's state, table of
// documents and segments.
func indexDataFiles(t *testing.T, dir string) []string {
	t.Helper()
	if !ownEngine() {
		var out []string
		for i := range Shards {
			out = append(out, filepath.Join(dir, fmt.Sprintf("index-%d.db", i)))
		}
		return out
	}
	own := filepath.Join(dir, ownDirName)
	out := []string{filepath.Join(own, ownStateName), filepath.Join(own, ownDocsName)}
	segs, _ := filepath.Glob(filepath.Join(own, ownTextDir, "*.seg"))
	sort.Strings(segs)
	out = append(out, segs...)
	for _, p := range out {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// ownFileDocs is fileDocs for the own engine: the smallest document id
// of the file's current number and its number of documents.
func ownFileDocs(t *testing.T, x *Index, path string) (int64, int) {
	t.Helper()
	st, err := readOwnState(x.fsys(), filepath.Join(x.ownDir(), ownStateName))
	if err != nil {
		t.Fatal(err)
	}
	r := st.Files[path]
	if r == nil {
		t.Fatalf("%s is not in the index", path)
	}
	data, err := os.ReadFile(filepath.Join(x.ownDir(), ownDocsName))
	if err != nil {
		t.Fatal(err)
	}
	var first int64
	n := 0
	for i := 0; i+ownRecSize <= len(data); i += ownRecSize {
		if binary.LittleEndian.Uint32(data[i:]) == r.No {
			if n == 0 {
				first = int64(i/ownRecSize) + 1
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s has no documents in the index", path)
	}
	return first, n
}

// ownHasFile reports whether the own index's state knows path.
func ownHasFile(t *testing.T, x *Index, path string) bool {
	t.Helper()
	st, err := readOwnState(x.fsys(), filepath.Join(x.ownDir(), ownStateName))
	if err != nil {
		t.Fatal(err)
	}
	return st.Files[path] != nil
}
