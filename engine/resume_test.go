package engine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/sessionfile"
	gen "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
	"github.com/sessctl/sessctl/migrate"
)

// resumeInputs are version 1 and 2 files with what the migration treats
// apart: malformed lines, non-canonical JSON, a hook message, a
// compaction, CRLF, a later header, a torn or unterminated last line.
var resumeInputs = map[string]string{
	"v1": legacyV1,
	"v1-messy": "\n" + `{"type":"session","id":"00000000-0000-4000-8000-0000000000bb","cwd":"/w"}
{"type":"message","timestamp":"t1","message":{"role":"user","content":"q"}}
not json
{ "type": "message", "timestamp": "t2", "message": {"role":"assistant","content":[],"n":1.0} }` + "\r" + `
{"type":"message","timestamp":"t3","message":{"role":"hookMessage","customType":"h","content":"h","display":true}}
{"type":"compaction","timestamp":"t4","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}
{"type":"session","id":"later"}
{"type":"message","id":"own","timestamp":"t5","message":{"role":"user","content":"\u00e9"}}
{"type":"message","timestamp":"t6","mess`,
	"v2": `{"type":"session","version":2,"id":"00000000-0000-4000-8000-0000000000cc","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"h","display":true}}
{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"q"}}
{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"assistant","content":[]}}`,
}

// A write-mode open migrates in memory and its first write writes those
// bytes: the file is what migrate.File writes, the original is kept, and
// the session's entries are the new file's lines at their new offsets.
func TestFlushWritesTheMigrationOfTheOpen(t *testing.T) {
	t.Parallel()
	var big bytes.Buffer
	if _, err := gen.Write(&big, gen.Options{Seed: 9, Entries: 4000, Version: 1}); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"workload": big.String()}
	for k, v := range resumeInputs {
		inputs[k] = v
	}
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := filepath.Join(dir, "s.jsonl")
			ref := filepath.Join(dir, "ref.jsonl")
			for _, f := range []string{p, ref} {
				if err := os.WriteFile(f, []byte(input), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := migrate.File(context.Background(), ref, migrate.FileOptions{NoBackup: true})
			if err != nil || !want.Migrated {
				t.Fatalf("reference migration: %+v, %v", want, err)
			}
			ffs := vfstest.NewFaultFS(vfs.OS())
			s, err := openStore(t, engine.StoreOptions{FS: ffs}).Open(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			reads := ffs.Calls(vfstest.OpRead)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if n := ffs.Calls(vfstest.OpRead) - reads; n != 0 {
				t.Errorf("the flush read %d times: the file was migrated again, not written from memory", n)
			}
			got, _ := os.ReadFile(p)
			if wantBytes, _ := os.ReadFile(ref); !bytes.Equal(got, wantBytes) {
				t.Fatalf("flushed file\n%s\nmigrate.File writes\n%s", got, wantBytes)
			}
			rec := s.Recovery()
			if bak, err := os.ReadFile(rec.Backup); err != nil || string(bak) != input {
				t.Errorf("backup %q is not the original (%v)", rec.Backup, err)
			}
			if !rec.Migrated || rec.FromVersion != want.From || rec.Malformed != 0 {
				t.Errorf("recovery %+v, want migrated from %v, nothing malformed in the new file", rec, want.From)
			}
			if temps, _ := sessionfile.TempFiles(nil, p); len(temps) != 0 {
				t.Errorf("temporary files left: %v", temps)
			}
			ro := openRO(t, p).Entries()
			es := s.Entries()
			if len(es) != len(ro) {
				t.Fatalf("%d entries after the flush, a fresh open reads %d", len(es), len(ro))
			}
			for i := range es {
				if !bytes.Equal(es[i].Raw, ro[i].Raw) || es[i].Offset != ro[i].Offset || es[i].Line != ro[i].Line ||
					!bytes.Equal(got[es[i].Offset:es[i].Offset+int64(len(es[i].Raw))], es[i].Raw) {
					t.Fatalf("entry %d: line %d at %d %s; a fresh open: line %d at %d %s", i,
						es[i].Line, es[i].Offset, es[i].Raw, ro[i].Line, ro[i].Offset, ro[i].Raw)
				}
			}
			// Appends go after the migrated lines, under the last entry.
			last := es[len(es)-1]
			if _, err := s.AppendMessage(raw(`{"content":"next","role":"user","timestamp":1}`)); err != nil {
				t.Fatal(err)
			}
			after := openRO(t, p).Entries()
			if len(after) != len(ro)+1 || after[len(after)-1].ParentID != last.ID {
				t.Errorf("after an append: %d entries (want %d), last parent %q (want %q)",
					len(after), len(ro)+1, after[len(after)-1].ParentID, last.ID)
			}
		})
	}
}

// A line another process (pi takes no lock) appends while the first write
// rewrites the file is not lost: after the open, the session reads the
// file again; in the instant before the rename, the rewrite made from
// memory is dropped and the file migrated from disk.
func TestFlushMigrationKeepsLinesAppendedMeanwhile(t *testing.T) {
	t.Parallel()
	const piLine = `{"type":"message","timestamp":"t9","message":{"role":"user","content":"from pi"}}` + "\n"
	for _, when := range []string{"after open", "before rename"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, []byte(legacyV1), 0o600); err != nil {
				t.Fatal(err)
			}
			appendPi := func() {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				if _, err := f.WriteString(piLine); err != nil {
					t.Error(err)
				}
			}
			ffs := vfstest.NewFaultFS(vfs.OS())
			var once sync.Once
			if when == "before rename" {
				// The backup is linked just before the rename.
				ffs.SetHook(func(op vfstest.Op, path string) error {
					if op == vfstest.OpLink {
						once.Do(appendPi)
					}
					return nil
				})
			}
			s, err := openStore(t, engine.StoreOptions{FS: ffs}).Open(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if when == "after open" {
				appendPi()
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			es := s.Entries()
			if len(es) != 3 || !strings.Contains(string(es[2].Raw), "from pi") || es[2].ParentID != es[1].ID {
				t.Fatalf("entries after the flush: %d, last %s", len(es), es[len(es)-1].Raw)
			}
			ro := openRO(t, p).Entries()
			if len(ro) != 3 || !bytes.Equal(ro[2].Raw, es[2].Raw) {
				t.Errorf("the file holds %d entries; want the line pi appended, migrated", len(ro))
			}
			rec := s.Recovery()
			if bak, err := os.ReadFile(rec.Backup); err != nil || string(bak) != legacyV1+piLine {
				t.Errorf("backup %q: %q, %v; want the original with pi's line", rec.Backup, bak, err)
			}
			if m, _ := filepath.Glob(p + ".v1.bak*"); len(m) != 1 {
				t.Errorf("backups %v, want one", m)
			}
			if temps, _ := sessionfile.TempFiles(nil, p); len(temps) != 0 {
				t.Errorf("temporary files left: %v", temps)
			}
		})
	}
}
