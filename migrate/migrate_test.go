package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// v1File is a hand-written version 1 session: no version, no ids, a
// compaction with firstKeptEntryIndex, a hookMessage, two malformed lines.
const v1File = `{"type":"session","id":"7d3f1c2e-0000-4000-8000-000000000001","timestamp":"2025-11-20T10:00:00.000Z","cwd":"/home/u/p","provider":"anthropic","modelId":"m"}
{"type":"message","timestamp":"2025-11-20T10:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}
not json at all
{"type":"message","timestamp":"2025-11-20T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"provider":"p","model":"m","timestamp":2},"extra":{"kept":true}}
{"type":"message","timestamp":"2025-11-20T10:00:03.000Z","message":{"role":"hookMessage","customType":"h","content":"hook","display":true,"timestamp":3}}
[1,2,3]
{"type":"compaction","timestamp":"2025-11-20T10:00:04.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}
{"type":"message","timestamp":"2025-11-20T10:00:05.000Z","message":{"role":"user","content":"after","timestamp":5}}
`

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func parse(t *testing.T, data []byte) []jsonl.Entry {
	t.Helper()
	p := jsonl.ParseFile(data)
	if len(p.Malformed) != 0 {
		t.Fatalf("migrated file has malformed lines: %+v", p.Malformed)
	}
	return p.Entries
}

// checkTree asserts a migrated file is a valid version 3 tree: one header
// of version 3, unique ids, every parent present (or null).
func checkTree(t *testing.T, data []byte) {
	t.Helper()
	entries := parse(t, data)
	if v := migrate.VersionOf(&entries[0]); v != 3 {
		t.Fatalf("version %v after migration", v)
	}
	ix := tree.Build(entries)
	seen := map[string]bool{}
	for _, e := range ix.Entries() {
		if e.IDKind != jsonl.KindString || seen[e.ID] {
			t.Fatalf("missing or duplicate id on line %d: %q", e.Line, e.ID)
		}
		seen[e.ID] = true
		if p, ok := tree.ParentKey(e); ok && !ix.Has(p) {
			t.Fatalf("line %d: parent %s does not exist", e.Line, p)
		}
	}
}

func TestFileMigratesKeepsBackupAndIsIdempotent(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, "s.jsonl", v1File)
	res, err := migrate.File(context.Background(), path, migrate.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Migrated || res.From != 1 || res.To != 3 || res.Entries != 5 || res.Malformed != 2 {
		t.Errorf("result %+v: want migrated 1 -> 3, 5 entries, 2 malformed", res)
	}
	bak, err := os.ReadFile(res.Backup)
	if err != nil || string(bak) != v1File {
		t.Errorf("backup %s is not the original byte for byte (err %v)", res.Backup, err)
	}
	got, _ := os.ReadFile(path)
	checkTree(t, got)
	entries := parse(t, got)
	// Keys the migration adds go last; unknown members stay in place.
	if !strings.Contains(string(entries[2].Raw), `"extra":{"kept":true},"id":"`) {
		t.Errorf("added keys are not at the end or extra was lost: %s", entries[2].Raw)
	}
	if entries[3].Role != "custom" {
		t.Errorf("hookMessage not renamed: %s", entries[3].Raw)
	}
	// firstKeptEntryIndex 2 counts the header as 0 and skips malformed
	// lines: it names the assistant message.
	if want := `"firstKeptEntryId":"` + entries[2].ID + `"`; !strings.Contains(string(entries[4].Raw), want) || strings.Contains(string(entries[4].Raw), "firstKeptEntryIndex") {
		t.Errorf("compaction %s: want %s", entries[4].Raw, want)
	}
	// Twice equals once: the second run finds version 3 and writes nothing.
	res2, err := migrate.File(context.Background(), path, migrate.FileOptions{})
	if err != nil || res2.Migrated || res2.Backup != "" {
		t.Errorf("second run: %+v, %v", res2, err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(got, again) {
		t.Error("second run changed the file")
	}
}

// TestFileKeepsLinesAppendedMeanwhile appends a line, as pi does without
// a lock, after File has streamed the file and before it renames: the
// line must not be lost. File migrates the file again, and the result
// holds the line; a file that changes at every attempt is left alone,
// with the error ErrChanged.
func TestFileKeepsLinesAppendedMeanwhile(t *testing.T) {
	t.Parallel()
	const piLine = `{"type":"message","timestamp":"2025-11-20T10:00:06.000Z","message":{"role":"user","content":"from pi","timestamp":6}}` + "\n"
	for _, appends := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("appended %d times", appends), func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, "s.jsonl", v1File)
			ffs := vfstest.NewFaultFS(vfs.OS())
			done := 0
			// The backup is linked after the stream, just before the rename.
			ffs.SetHook(func(op vfstest.Op, _ string) error {
				if op == vfstest.OpLink && done < appends {
					done++
					f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						return err
					}
					defer f.Close()
					_, err = f.WriteString(piLine)
					return err
				}
				return nil
			})
			res, err := migrate.File(context.Background(), path, migrate.FileOptions{FS: ffs})
			got, _ := os.ReadFile(path)
			temps, _ := filepath.Glob(path + vfs.TempSuffix + "*")
			baks, _ := filepath.Glob(path + ".v1.bak*")
			if len(temps) != 0 {
				t.Errorf("temporary files left: %v", temps)
			}
			if appends == 3 { // every attempt saw the file change
				if !errors.Is(err, migrate.ErrChanged) {
					t.Fatalf("err = %v, want ErrChanged", err)
				}
				if want := v1File + strings.Repeat(piLine, 3); string(got) != want || len(baks) != 0 {
					t.Errorf("the file was touched (backups %v):\n%s", baks, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, got)
			if n := strings.Count(string(got), "from pi"); n != appends || res.Entries != 5+appends {
				t.Errorf("the migrated file holds %d of the %d lines appended (%d entries):\n%s", n, appends, res.Entries, got)
			}
			if bak, err := os.ReadFile(res.Backup); err != nil || string(bak) != v1File+strings.Repeat(piLine, appends) || len(baks) != 1 {
				t.Errorf("backups %v; %s: %q, %v", baks, res.Backup, bak, err)
			}
		})
	}
}

func TestFileIsDeterministic(t *testing.T) {
	t.Parallel()
	a := writeTemp(t, "a.jsonl", v1File)
	b := writeTemp(t, "b.jsonl", v1File)
	for _, p := range []string{a, b} {
		if _, err := migrate.File(context.Background(), p, migrate.FileOptions{NoBackup: true}); err != nil {
			t.Fatal(err)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if diff := cmp.Diff(string(da), string(db)); diff != "" {
		t.Errorf("two copies migrated differently:\n%s", diff)
	}
	// The in-memory migration gives the same entries.
	mem, res, err := migrate.Entries(jsonl.ParseFile([]byte(v1File)).Entries)
	if err != nil || !res.Migrated {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, e := range mem {
		buf.Write(e.Raw)
		buf.WriteByte('\n')
	}
	if diff := cmp.Diff(string(da), buf.String()); diff != "" {
		t.Errorf("in-memory migration differs from the file migration:\n%s", diff)
	}
}

func TestFileDryRunAndRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		data    string
		opts    migrate.FileOptions
		wantErr error
	}{
		{"dry run", v1File, migrate.FileOptions{DryRun: true}, nil},
		{"version 4", `{"type":"session","version":4,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" + `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}` + "\n", migrate.FileOptions{}, errs.ErrUnsupportedVersion},
		{"no header", `{"type":"message","timestamp":"t","message":{"role":"user","content":"x"}}` + "\n", migrate.FileOptions{}, errs.ErrCorrupt},
		{"garbage", "garbage\nmore\n", migrate.FileOptions{}, errs.ErrCorrupt},
		{"version 3", `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n", migrate.FileOptions{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, "s.jsonl", c.data)
			_, err := migrate.File(context.Background(), path, c.opts)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			after, _ := os.ReadFile(path)
			if string(after) != c.data {
				t.Errorf("file changed")
			}
			ents, _ := os.ReadDir(filepath.Dir(path))
			if len(ents) != 1 {
				t.Errorf("left files behind: %v", ents)
			}
		})
	}
}

// A crash at any point of the rewrite leaves either the original file or
// the complete migrated one, never a mix or nothing.
func TestFileCrashLeavesOriginalOrResult(t *testing.T) {
	t.Parallel()
	var want []byte
	{
		path := writeTemp(t, "s.jsonl", v1File)
		if _, err := migrate.File(context.Background(), path, migrate.FileOptions{NoBackup: true}); err != nil {
			t.Fatal(err)
		}
		want, _ = os.ReadFile(path)
	}
	const path = "store/s.jsonl"
	for step := 1; ; step++ {
		cfs := vfstest.NewCrashFS()
		if err := vfs.WriteFileAtomic(cfs, path, []byte(v1File), vfs.FileMode); err != nil {
			t.Fatal(err)
		}
		ffs := vfstest.NewFaultFS(cfs)
		calls := 0
		var clones []*vfstest.CrashFS
		rng := rand.New(rand.NewPCG(uint64(step), 7))
		ffs.SetHook(func(op vfstest.Op, _ string) error {
			if op.Mutates() {
				calls++
				if calls == step {
					// The power goes at this point, before the operation.
					clones = append(clones, cfs.CrashClone(nil), cfs.CrashClone(rng))
				}
			}
			return nil
		})
		_, err := migrate.File(context.Background(), path, migrate.FileOptions{FS: ffs})
		if err != nil {
			t.Fatal(err)
		}
		if calls < step {
			if step < 3 {
				t.Fatalf("migration made only %d mutating calls", calls)
			}
			t.Logf("crashed before each of %d mutating calls, two ways each", step-1)
			break
		}
		for _, c := range clones {
			got, err := c.ReadFile(path)
			if err != nil {
				t.Fatalf("crash before call %d: the session file is gone: %v", step, err)
			}
			if string(got) != v1File && !bytes.Equal(got, want) {
				t.Fatalf("crash before call %d left neither the original nor the result:\n%s", step, got)
			}
		}
	}
}

func TestStreamMemoryIsBoundedByTheLongestLine(t *testing.T) {
	t.Parallel()
	// A large v1 file through a reader: Stream never needs it whole. The
	// check is structural (the output is a valid tree, every entry kept),
	// memory is measured by BenchmarkMigrateStream.
	var src bytes.Buffer
	if _, err := workload.Write(&src, workload.Options{Seed: 3, Entries: 3000, Version: 1}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := migrate.Stream(context.Background(), bytes.NewReader(src.Bytes()), &out)
	if err != nil || !res.Migrated || res.Entries != 3000 {
		t.Fatalf("%+v %v", res, err)
	}
	checkTree(t, out.Bytes())
}

// BenchmarkMigrateStream migrates a generated 20,000-entry v1 file (about
// 32 MB) from memory to nowhere: the throughput of the steps and the
// encoder. `make bench` measures whole files on disk.
func BenchmarkMigrateStream(b *testing.B) {
	var src bytes.Buffer
	if _, err := workload.Write(&src, workload.Options{Seed: 5, Entries: 20000, Version: 1}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(src.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := migrate.Stream(context.Background(), bytes.NewReader(src.Bytes()), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
