package stats_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// spentAt is an assistant message of model at t, spending in input
// tokens and cost dollars.
func spentAt(id, model string, t time.Time, in int, cost float64) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":null,"timestamp":%q,"message":{"role":"assistant","provider":"prov","model":%q,"usage":{"input":%d,"output":2,"cost":{"total":%v}}}}`,
		id, t.UTC().Format(time.RFC3339Nano), model, in, cost)
}

// daysByHand counts what the session files spent per day and model, a
// line at a time, with the rule every count shares (EntrySpent,
// EntryTime): path -> "day model" -> messages and usage.
func daysByHand(t *testing.T, paths []string) map[string]map[string]stats.DayUsage {
	t.Helper()
	out := map[string]map[string]stats.DayUsage{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]stats.DayUsage{}
		for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
			if i == 0 {
				continue // the header
			}
			en, err := jsonl.ParseEntry(line)
			if err != nil {
				t.Fatal(err)
			}
			sp, ok := stats.EntrySpent(&en)
			if !ok {
				continue
			}
			day := "unknown"
			if at, ok := stats.EntryTime(&en); ok {
				day = at.Local().Format(time.DateOnly)
			}
			d := m[day+" "+sp.Model]
			d.Day, d.Model = day, sp.Model
			if sp.Message {
				d.Messages++
			}
			d.Usage.Add(sp.Usage)
			m[day+" "+sp.Model] = d
		}
		out[p] = m
	}
	return out
}

// daysOf turns FileUsages into daysByHand's shape, checking their order.
func daysOf(t *testing.T, fus []*stats.FileUsage) map[string]map[string]stats.DayUsage {
	t.Helper()
	out := map[string]map[string]stats.DayUsage{}
	for _, f := range fus {
		m := map[string]stats.DayUsage{}
		for i, d := range f.Days {
			if i > 0 {
				prev := f.Days[i-1]
				if d.Day != "unknown" && (prev.Day == "unknown" || prev.Day > d.Day || (prev.Day == d.Day && prev.Model >= d.Model)) {
					t.Errorf("%s: days out of order: %v", f.Path, f.Days)
				}
			}
			m[d.Day+" "+d.Model] = d
		}
		out[f.Path] = m
	}
	return out
}

// approx compares usages to the cent's billionth: the per-day sums may
// be added in another order.
var approx = cmp.Comparer(func(a, b float64) bool { return a == b || (a-b < 1e-9 && b-a < 1e-9) })

// TestDirUsagePerDay: what Dir gives DirOptions.Usage, from the files or
// from the stats index, and ReadFileUsage are what each file spent per
// local day and model, counted a line at a time by EntrySpent and
// EntryTime, for files over several days and models, entries without a
// time included; a line appended is seen.
func TestDirUsagePerDay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	cache := t.TempDir()
	t0 := time.Date(2026, 3, 1, 11, 0, 0, 0, time.Local)
	var paths []string
	for i := range 4 {
		var lines []string
		lines = append(lines, testenv.PiHeader)
		for j := range 6 {
			at := t0.Add(time.Duration(i*7+j*9) * time.Hour) // across days, and midnights
			lines = append(lines, spentAt(fmt.Sprintf("a%d", j), fmt.Sprintf("m%d", (i+j)%3), at, 10*(j+1), 0.01*float64(i+j+1)))
		}
		// No time at all; a pi 1.x usage entry of another model.
		lines = append(lines, `{"type":"message","id":"x","parentId":null,"message":{"role":"assistant","provider":"prov","model":"m0","usage":{"input":1,"output":1,"cost":{"total":0.5}}}}`,
			fmt.Sprintf(`{"type":"usage","id":"u","parentId":"x","timestamp":%q,"kind":"title","provider":"p","model":"small","usage":{"input":5,"output":5,"cost":{"total":0.1}}}`, t0.UTC().Format(time.RFC3339Nano)))
		p := filepath.Join(root, fmt.Sprintf("--d%d--", i%2), fmt.Sprintf("s%d.jsonl", i))
		writeOld(t, p, testenv.Lines(lines...))
		paths = append(paths, p)
	}
	slices.Sort(paths)
	dir := func(o stats.DirOptions) []*stats.FileUsage {
		t.Helper()
		var got []*stats.FileUsage
		o.Usage = func(f *stats.FileUsage) { got = append(got, f) }
		if _, err := stats.Dir(context.Background(), root, o); err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(step string) {
		t.Helper()
		want := daysByHand(t, paths)
		days := map[string]bool{}
		for _, m := range want {
			for k := range m {
				days[strings.Fields(k)[0]] = true
			}
		}
		if len(days) < 4 || !days["unknown"] {
			t.Fatalf("%s: the fixture spans %v: not several days", step, days)
		}
		for _, run := range []struct {
			name string
			o    stats.DirOptions
		}{{"scan", stats.DirOptions{NoIndex: true}}, {"index written", stats.DirOptions{CacheDir: cache}}, {"from the index", stats.DirOptions{CacheDir: cache}}} {
			got := dir(run.o)
			if len(got) != len(paths) {
				t.Fatalf("%s, %s: %d files counted, want %d", step, run.name, len(got), len(paths))
			}
			for i, f := range got {
				fi, err := os.Stat(paths[i])
				if err != nil {
					t.Fatal(err)
				}
				if f.Path != paths[i] || f.Size != fi.Size() || !f.ModTime.Equal(fi.ModTime()) {
					t.Errorf("%s, %s: file %d is %s (%d bytes, %v), want %s (%d, %v)", step, run.name, i, f.Path, f.Size, f.ModTime, paths[i], fi.Size(), fi.ModTime())
				}
			}
			if diff := cmp.Diff(want, daysOf(t, got), approx, usageOpt); diff != "" {
				t.Errorf("%s, %s (-by hand +Dir):\n%s", step, run.name, diff)
			}
		}
		var one []*stats.FileUsage
		for _, p := range paths {
			f, err := stats.ReadFileUsage(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			one = append(one, f)
		}
		if diff := cmp.Diff(want, daysOf(t, one), approx, usageOpt); diff != "" {
			t.Errorf("%s, ReadFileUsage (-by hand +ReadFileUsage):\n%s", step, diff)
		}
	}
	check("first")

	// An answer of a new model, two days on, appended.
	data, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	writeOld(t, paths[1], string(data)+spentAt("late", "late-model", t0.Add(50*time.Hour), 77, 0.77)+"\n")
	check("appended")
	var seen bool
	for _, f := range dir(stats.DirOptions{CacheDir: cache}) {
		for _, d := range f.Days {
			seen = seen || (f.Path == paths[1] && d.Model == "prov/late-model" && d.Messages == 1 && d.Usage.Input == 77 &&
				d.Day == t0.Add(50*time.Hour).Format(time.DateOnly))
		}
	}
	if !seen {
		t.Error("the appended answer is not counted")
	}
	if _, err := stats.ReadFileUsage(nil, filepath.Join(root, "none.jsonl")); err == nil {
		t.Error("ReadFileUsage of a missing file: no error")
	}
}

// TestDirOldIndexRebuilt: a stats index of the version before the usage
// per day (2) is not an error: it is ignored, the files are read, and the
// index is written again in the current version.
func TestDirOldIndexRebuilt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	cache := t.TempDir()
	writeOld(t, filepath.Join(root, "--w--", "s.jsonl"), testenv.Lines(testenv.PiHeader,
		spentAt("a", "m1", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), 10, 0.1)))
	want := runDir(t, root, stats.DirOptions{NoIndex: true})
	if got := runDir(t, root, stats.DirOptions{CacheDir: cache}); !cmp.Equal(want, got, usageOpt) {
		t.Fatalf("with the index: %+v, want %+v", got, want)
	}
	files := indexFiles(t, cache)
	if len(files) != 1 {
		t.Fatalf("index files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	v3 := []byte(`"sessctlStatsIndex":3`)
	if !bytes.Contains(data, v3) {
		t.Fatalf("the index is not version 3: %.200s", data)
	}
	if err := os.WriteFile(files[0], bytes.Replace(data, v3, []byte(`"sessctlStatsIndex":2`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	reads := &countFS{FS: vfs.OS()}
	if got := runDir(t, root, stats.DirOptions{CacheDir: cache, FS: reads}); !cmp.Equal(want, got, usageOpt) {
		t.Errorf("with a version 2 index: %+v, want %+v", got, want)
	}
	if reads.reads.Load() != 1 {
		t.Errorf("%d session files read with a version 2 index, want 1", reads.reads.Load())
	}
	if data, err := os.ReadFile(files[0]); err != nil || !bytes.Contains(data, v3) {
		t.Errorf("the index is not written again in version 3: %.200s, %v", data, err)
	}
}

// TestReadFileUsageIsDirs: ReadFileUsage, which reads a file of the
// current format a line at a time, counts what Dir counts of the whole
// file, for files read the way jsonl.ParseFile reads them: a byte order
// mark, blank and CRLF lines, a line that is not JSON, a key spelt with
// an escape, a torn last line; and for a version 1 file, migrated first.
func TestReadFileUsageIsDirs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	files := map[string]string{
		"odd.jsonl": "\uFEFF" + testenv.PiHeader + "\n\n  \r\n" + spentAt("a", "m1", at, 10, 0.1) + "\r\nnot json\n" +
			`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-03T09:00:00Z","message":{"role":"assistant","provider":"prov","model":"m2","us\u0061ge":{"input":7,"output":1}}}` + "\n" +
			`{"type":"message","id":"c","parentId":"b","timestamp":"2026-03-03T10:00:00Z","message":{"role":"assist\u0061nt","provider":"prov","model":"m3"}}` + "\n" +
			spentAt("t", "m1", at, 99, 9.9)[:40],
		"v1.jsonl": testenv.Lines(`{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
			`{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q"}}`,
			`{"type":"message","timestamp":"2026-01-02T00:00:02.000Z","message":{"role":"assistant","provider":"prov","model":"m1","usage":{"input":5,"output":1,"cost":{"input":0.3}}}}`),
	}
	for name, data := range files {
		testenv.WriteFile(t, filepath.Join(root, name), data)
	}
	var fromDir []*stats.FileUsage
	if _, err := stats.Dir(context.Background(), root, stats.DirOptions{NoIndex: true, Usage: func(f *stats.FileUsage) { fromDir = append(fromDir, f) }}); err != nil {
		t.Fatal(err)
	}
	if len(fromDir) != len(files) {
		t.Fatalf("Dir counted %d files, want %d", len(fromDir), len(files))
	}
	for _, want := range fromDir {
		got, err := stats.ReadFileUsage(nil, want.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Days) < 1 {
			t.Errorf("%s: Dir counts no usage", want.Path)
		}
		if diff := cmp.Diff(want, got, usageOpt); diff != "" {
			t.Errorf("%s (-Dir +ReadFileUsage):\n%s", want.Path, diff)
		}
	}
	testenv.WriteFile(t, filepath.Join(root, "noheader.jsonl"), testenv.Lines(spentAt("a", "m1", at, 1, 0.1)))
	if _, err := stats.ReadFileUsage(nil, filepath.Join(root, "noheader.jsonl")); err == nil {
		t.Error("ReadFileUsage of a file without a header: no error")
	}
}
