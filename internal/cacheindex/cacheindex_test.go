package cacheindex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// TestLines checks that index lines round-trip, that a damaged payload or
// key is rejected, that later lines win, and that an index whose first
// line is another directory's is ignored.
func TestLines(t *testing.T) {
	st := Stamp{Size: 12, MtimeNs: 1<<62 + 1, Ino: 1<<64 - 1, CtimeNs: -5}
	line := AppendLine(nil, "a.jsonl", st, "p", []byte(`{"x":1}`))
	name, got, payload, ok := DecodeLine(line[:len(line)-1], "p")
	if !ok || name != "a.jsonl" || got != st || string(payload) != `{"x":1}` {
		t.Fatalf("round trip: %q %+v %q %v", name, got, payload, ok)
	}
	bare := AppendLine(nil, "b.jsonl", st, "p", nil)
	if name, _, payload, ok := DecodeLine(bare[:len(bare)-1], "p"); !ok || name != "b.jsonl" || payload != nil {
		t.Errorf("a line without payload: %q %q %v", name, payload, ok)
	}
	for _, bad := range []string{
		`{"name":"a.jsonl","size":12,"mtimeNs":"1","ino":"1","ctimeNs":"1","crc":"00000000","p":{"x":1}}`, // checksum
		`{"name":"a.jsonl","size":12,"ino":"1","crc":"00000000"}`,                                         // no mtime
		`{"name":"../a.jsonl","size":12,"mtimeNs":"1"}`,                                                   // not a file name
	} {
		if _, _, _, ok := DecodeLine([]byte(bad), "p"); ok {
			t.Errorf("%s: accepted", bad)
		}
	}

	dir := t.TempDir()
	path := Path(dir, "kind", "/some/dir")
	body := append(append(Header("fmt", 1, "/some/dir"), '\n'), line...)
	body = append(body, AppendLine(nil, "a.jsonl", Stamp{Size: 99}, "p", []byte(`{"x":2}`))...)
	Replace(vfs.OS(), path, body)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index file: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("index directory: %v %v", fi, err)
	}
	decode := func(l []byte) (string, string, bool) {
		name, _, p, ok := DecodeLine(l, "p")
		return name, string(p), ok
	}
	if m := ReadLines(vfs.OS(), path, Header("fmt", 1, "/some/dir"), decode); len(m) != 1 || m["a.jsonl"] != `{"x":2}` {
		t.Errorf("later line does not win: %v", m)
	}
	if m := ReadLines(vfs.OS(), path, Header("fmt", 1, "/other/dir"), decode); len(m) != 0 {
		t.Errorf("a foreign index was read: %v", m)
	}
	now := time.Now()
	if Cacheable(now.Add(-RacyWindow), now) || !Cacheable(now.Add(-RacyWindow-time.Millisecond), now) {
		t.Error("the racy window is not two seconds")
	}
}
