package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/migrate"
)

var migrateFixtures = []string{
	// JavaScript whitespace around the text, which pi trims.
	"\n \uFEFF" + `{"type":"session","id":"w"}` + "\n" + `{"type":"message","timestamp":"t"}` + "\u00a0\n\u3000",
	// Version 1: no ids, a compaction that counts lines, a hook message.
	`{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","timestamp":"t1","message":{"role":"user","content":"q"}}
{"type":"message","timestamp":"t2","message":{"role":"assistant","content":[{"type":"text","text":"a"}]}}
{"type":"compaction","timestamp":"t3","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}
{"type":"compaction","timestamp":"t4","summary":"s","firstKeptEntryIndex":9,"firstKeptEntryId":"old"}
{"type":"message","timestamp":"t5","message":{"role":"hookMessage","content":"h"}}
`,
	// Version 2 with ids, a hook message, a torn tail.
	`{"type":"session","version":2,"id":"s2","timestamp":"t","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"h","display":true}}
{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"q"}}
{"type":"message","id":"c","par`,
	// Version 1 with entries that already carry ids, a second header,
	// garbage, duplicate keys and an unterminated last line.
	"\uFEFF" + `{"type":"session","id":"s3","version":1}
{"type":"message","id":"x","parentId":"x","message":{"role":"user"}}

garbage
{"type":"session","id":"s3b"}
{"type":"label","targetId":"x","label":"l","type":"label"}
{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}`,
	// Version 3: nothing to do.
	`{"type":"session","version":3,"id":"s4","timestamp":"t","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}
`,
	// No header.
	`{"type":"message","timestamp":"t"}` + "\n",
	`{"type":"session","version":"2","id":"s5"}` + "\n" + `{"type":"message"}` + "\n",
	`{"type":"session","version":null,"id":"s6"}` + "\n" + `{"type":"x","id":1}` + "\n",
}

// FuzzMigrate checks the migration of whole files: it never panics; the
// streamed rewrite and the in-memory migration agree; the output is a
// clean version 3 file whose entries, when ids were assigned (version 1),
// form a valid tree; and migrating again changes nothing.
func FuzzMigrate(f *testing.F) {
	for _, s := range migrateFixtures {
		f.Add([]byte(s))
	}
	for _, data := range testenv.CorpusFiles(f, testenv.Suffix(".jsonl"), "pi", "cases") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		var out bytes.Buffer
		res, err := migrate.Stream(ctx, bytes.NewReader(data), &out)
		if errors.Is(err, migrate.ErrNoHeader) {
			// The loader must agree that there is no usable header.
			if p := jsonl.ParseFile(data); len(p.Entries) > 0 && p.Entries[0].IsHeader() && p.Entries[0].IDKind == jsonl.KindString {
				t.Fatalf("the rewrite finds no header, the loader finds %s", p.Entries[0].Raw)
			}
			return
		}
		if err != nil {
			return // refused for another reason: nothing to check but no panic
		}
		if !res.Migrated {
			if out.Len() != 0 {
				t.Fatalf("nothing migrated but %d bytes written", out.Len())
			}
			return
		}
		p := jsonl.ParseFile(out.Bytes())
		if p.Tail != jsonl.TailClean || len(p.Malformed) > 0 {
			t.Fatalf("migrated file has tail %d and %d malformed lines:\n%s", p.Tail, len(p.Malformed), out.Bytes())
		}
		if len(p.Entries) == 0 || !p.Entries[0].IsHeader() || migrate.VersionOf(&p.Entries[0]) != jsonl.CurrentVersion {
			t.Fatalf("migrated file does not start with a version 3 header:\n%s", out.Bytes())
		}
		n := 0
		for _, e := range p.Entries {
			if !e.IsHeader() {
				n++
			}
		}
		if n != res.Entries {
			t.Fatalf("Result.Entries = %d, the output has %d", res.Entries, n)
		}
		// Twice equals once: the output needs no migration.
		var twice bytes.Buffer
		res2, err := migrate.Stream(ctx, bytes.NewReader(out.Bytes()), &twice)
		if err != nil || res2.Migrated || twice.Len() != 0 {
			t.Fatalf("migrating the output again: migrated %v, %d bytes, %v", res2.Migrated, twice.Len(), err)
		}
		// The in-memory migration (read-only opens) sees the same lines
		// as the rewrite (write-mode opens).
		mem, _, err := migrate.Entries(jsonl.ParseFile(data).Entries)
		if err != nil {
			t.Fatalf("in-memory migration failed where the stream succeeded: %v", err)
		}
		if len(mem) != len(p.Entries) {
			t.Fatalf("in-memory migration gives %d lines, the stream %d\ninput %q", len(mem), len(p.Entries), data)
		}
		for i := range mem {
			if !bytes.Equal(mem[i].Raw, p.Entries[i].Raw) {
				t.Fatalf("line %d: in memory %s, streamed %s", i+1, mem[i].Raw, p.Entries[i].Raw)
			}
		}
		// The bytes a write-mode open's migration writes are the
		// stream's, parsed with or without the canonical check.
		pc, canon := jsonl.ParseFileCanonical(data)
		for _, c := range []struct {
			entries []jsonl.Entry
			canon   []bool
		}{{jsonl.ParseFile(data).Entries, nil}, {pc.Entries, canon}} {
			m, err := migrate.InMemory(c.entries, c.canon)
			if err != nil {
				t.Fatalf("in-memory migration failed where the stream succeeded: %v", err)
			}
			if got := bytes.Join(m.Data, nil); !bytes.Equal(got, out.Bytes()) {
				t.Fatalf("in memory (canon known %v)\n%q\nstreamed\n%q", c.canon != nil, got, out.Bytes())
			}
		}
		buf := append(make([]byte, 0, 2*len(data)+4096), data...)
		pb, cb := jsonl.ParseFileCanonical(buf)
		if m, ok, err := migrate.InPlace(buf, pb.Entries, cb); err != nil {
			t.Fatalf("migration in place failed where the stream succeeded: %v", err)
		} else if ok && !bytes.Equal(bytes.Join(m.Data, nil), out.Bytes()) {
			t.Fatalf("in place\n%q\nstreamed\n%q", bytes.Join(m.Data, nil), out.Bytes())
		} else if !ok && !bytes.Equal(buf, data) {
			t.Fatalf("a refused migration in place changed the bytes")
		}
		if res.From >= 2 {
			return // ids were the input's; nothing promises a valid tree
		}
		// Version 1: every entry got a fresh id; parents are earlier
		// entries or null.
		seen := map[string]bool{}
		for _, e := range p.Entries {
			if e.IsHeader() {
				continue
			}
			if e.IDKind != jsonl.KindString || seen[e.ID] {
				t.Fatalf("entry on line %d has id %q (kind %d), repeated: %v", e.Line, e.ID, e.IDKind, seen[e.ID])
			}
			switch e.ParentKind {
			case jsonl.KindNull:
			case jsonl.KindString:
				if !seen[e.ParentID] {
					t.Fatalf("entry %s names parent %s, which comes nowhere before it", e.ID, e.ParentID)
				}
			default:
				t.Fatalf("entry %s has parentId of kind %d", e.ID, e.ParentKind)
			}
			seen[e.ID] = true
		}
	})
}
