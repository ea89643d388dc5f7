package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout/vfs"
)

// findMostRecentScan is pi's findMostRecentSession as a plain scan, and
// what findMostRecent answered before it read the headers newest first:
// every file's header, then its stat; the newest valid file, the first by
// name among equal times.
func findMostRecentScan(fsys interface {
	Stat(string) (os.FileInfo, error)
}, dir string, skipChildren bool) (string, bool) {
	files, err := sessionFiles(orOS(nil), dir, false)
	if err != nil {
		return "", false
	}
	var best string
	var bestTime time.Time
	for _, n := range files.names {
		name := filepath.Join(dir, n)
		if h, ok := headerInFirst512(orOS(nil), name); !ok || (skipChildren && h.HasParentSession) {
			continue
		}
		st, err := fsys.Stat(name)
		if err != nil {
			continue
		}
		if best == "" || st.ModTime().After(bestTime) {
			best, bestTime = name, st.ModTime()
		}
	}
	return best, best != ""
}

type osStat struct{}

func (osStat) Stat(n string) (os.FileInfo, error) { return os.Stat(n) }

// TestIndexesFollowChangesBehindTheirBack changes a store behind the back
// of its caches, at random (a seeded sequence): files added, grown,
// rewritten in place with their size and time restored, replaced by a
// rename, deleted, renamed within and across directories, touched, made
// into something that is not a session and back, linked; and after each
// change checks that the list index (with and without the texts) gives
// exactly what a scan gives, and that the newest-first ContinueRecent
// picks what reading every header picks.
func TestIndexesFollowChangesBehindTheirBack(t *testing.T) {
	agent := t.TempDir()
	cache := t.TempDir()
	root := filepath.Join(agent, "sessions")
	dirs := []string{filepath.Join(root, "--home-a--"), filepath.Join(root, "--home-b--")}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(35, 35))
	base := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	seq := 0
	// A time in the past: old enough to be cached, sometimes equal to
	// another file's.
	past := func() time.Time { return base.Add(time.Duration(r.IntN(40)) * time.Minute) }
	files := func() []string {
		var out []string
		for _, d := range dirs {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
		return out
	}
	// pick returns any name in the store (a link too, maybe dangling);
	// pickRegular a regular file, for the changes that write one.
	pick := func(regular bool) string {
		var fs []string
		for _, f := range files() {
			if fi, err := os.Lstat(f); err == nil && (!regular || fi.Mode().IsRegular()) {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return ""
		}
		return fs[r.IntN(len(fs))]
	}
	newSession := func(dir string) string {
		seq++
		var b bytes.Buffer
		if _, err := workload.Write(&b, workload.Options{Seed: uint64(seq), Entries: 5 + r.IntN(30), ToolResultMax: 2000, ToolResultMin: 100, ImageEvery: -1,
			Start: base.Add(time.Duration(seq) * time.Minute), Cwd: "/home/" + filepath.Base(dir)}); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		if r.IntN(5) == 0 { // a child session
			data = bytes.Replace(data, []byte(`"cwd":`), []byte(`"parentSession":"/elsewhere/p.jsonl","cwd":`), 1)
		}
		p := filepath.Join(dir, fmt.Sprintf("2026-01-01T00-00-%02d-000Z_%08d-0000-7000-8000-000000000000.jsonl", seq%60, seq))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	setTime := func(p string, when time.Time) {
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dirs {
		for range 8 {
			setTime(newSession(d), past())
		}
	}
	st, err := OpenStore(context.Background(), StoreOptions{AgentDir: agent, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	list := func(o ListOptions) []string {
		t.Helper()
		infos, err := st.List(context.Background(), "", o)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(infos))
		for i := range infos {
			j, _ := infos[i].MarshalJSON()
			out[i] = string(j)
			if o.NoText && infos[i].AllMessagesText() != "" {
				t.Fatalf("NoText listing has texts for %s", infos[i].Path)
			}
		}
		return out
	}
	// lazy is how sessctl list --json lists: without the texts, then
	// each text in turn (ListTexts).
	lazy := func(o ListOptions) []string {
		t.Helper()
		o.NoText = true
		infos, err := st.List(context.Background(), "", o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for in, err := range st.ListTexts(context.Background(), infos, o) {
			if err != nil {
				t.Fatal(err)
			}
			j, _ := in.MarshalJSON()
			out = append(out, string(j))
		}
		return out
	}
	check := func(step int, what string) {
		t.Helper()
		scan, scanNoText := list(ListOptions{NoIndex: true}), list(ListOptions{NoIndex: true, NoText: true})
		if got := lazy(ListOptions{NoIndex: true}); !slices.Equal(scan, got) {
			t.Fatalf("step %d (%s): the texts one at a time (no index) differ from a scan:\n%s", step, what, cmp.Diff(scan, got))
		}
		// Twice each: the first may rebuild, the second is served.
		for range 2 {
			if got := lazy(ListOptions{}); !slices.Equal(scan, got) {
				t.Fatalf("step %d (%s): the texts one at a time differ from a scan:\n%s", step, what, cmp.Diff(scan, got))
			}
			if got := list(ListOptions{NoText: true}); !slices.Equal(scanNoText, got) {
				t.Fatalf("step %d (%s): the list index (NoText) differs from a scan:\n%s", step, what, cmp.Diff(scanNoText, got))
			}
			if got := list(ListOptions{}); !slices.Equal(scan, got) {
				t.Fatalf("step %d (%s): the list index differs from a scan:\n%s", step, what, cmp.Diff(scan, got))
			}
		}
		for _, d := range dirs {
			for _, skip := range []bool{false, true} {
				want, wok := findMostRecentScan(osStat{}, d, skip)
				got, gok := findMostRecent(orOS(nil), d, skip, "")
				if want != got || wok != gok {
					t.Fatalf("step %d (%s): most recent of %s (skip children %v) is %s (%v), the scan says %s (%v)", step, what, filepath.Base(d), skip, got, gok, want, wok)
				}
			}
		}
	}
	check(0, "start")
	fi, err := os.Stat(files()[0])
	if err != nil {
		t.Fatal(err)
	}
	hasCtime := vfs.ChangeTime(fi) != 0
	if !hasCtime {
		t.Log("no inode change time on this platform: rewrites that restore size and time are not made")
	}
	for step := 1; step <= 80; step++ {
		op := r.IntN(10)
		if !hasCtime && (op == 2 || op == 3 || op == 7) {
			// Without an inode change time (Windows), a file rewritten with
			// its size and time restored is not told from the one cached.
			op = 0
		}
		// Deleting and renaming take any name, links included; the rest
		// write a regular file.
		p := pick(op != 4 && op != 5)
		var what string
		switch {
		case op == 0 || p == "":
			what = "added"
			np := newSession(dirs[r.IntN(2)])
			if r.IntN(4) > 0 {
				setTime(np, past())
			}
		case op == 1:
			what = "grown"
			fi, _ := os.Stat(p)
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, `{"type":"message","id":"g%07d","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z","message":{"role":"user","content":"grown %d","timestamp":%d}}`+"\n", step, step, 1777593600000+step)
			f.Close()
			if r.IntN(2) == 0 {
				setTime(p, fi.ModTime()) // the size alone tells
			} else {
				setTime(p, past())
			}
		case op == 2:
			what = "rewritten in place, size and time restored"
			fi, _ := os.Stat(p)
			data, _ := os.ReadFile(p)
			if i := bytes.LastIndex(data, []byte(`"text":"`)); i >= 0 && i+9 < len(data) {
				data[i+8] ^= 0x01 // another letter, the same length
			} else if i := bytes.Index(data, []byte(`"cwd":"`)); i >= 0 {
				data[i+8] ^= 0x01
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			setTime(p, fi.ModTime())
		case op == 3:
			what = "replaced by a rename"
			fi, _ := os.Stat(p)
			np := newSession(filepath.Dir(p))
			if err := os.Rename(np, p); err != nil {
				t.Fatal(err)
			}
			setTime(p, fi.ModTime())
		case op == 4:
			what = "deleted"
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		case op == 5:
			what = "renamed"
			seq++
			to := filepath.Join(dirs[r.IntN(2)], fmt.Sprintf("renamed-%d.jsonl", seq))
			if err := os.Rename(p, to); err != nil {
				t.Fatal(err)
			}
		case op == 6:
			what = "touched"
			setTime(p, past())
		case op == 7:
			what = "made not a session, or a session again"
			fi, _ := os.Stat(p)
			data, _ := os.ReadFile(p)
			if bytes.HasPrefix(data, []byte(`{"type":"session"`)) {
				data = bytes.Replace(data, []byte(`{"type":"session"`), []byte(`{"type":"sessio_"`), 1)
			} else {
				data = bytes.Replace(data, []byte(`{"type":"sessio_"`), []byte(`{"type":"session"`), 1)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			setTime(p, fi.ModTime())
		case op == 8:
			what = "linked"
			seq++
			if err := os.Symlink(p, filepath.Join(filepath.Dir(p), fmt.Sprintf("link-%d.jsonl", seq))); err != nil {
				t.Fatal(err)
			}
		default:
			what = "written now (too recent to cache), then aged"
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, `{"type":"custom","customType":"x","data":{},"id":"c%07d","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z"}`+"\n", step)
			f.Close()
			check(step, what+" (recent)")
			setTime(p, past())
		}
		check(step, strings.TrimSpace(what)+" "+filepath.Base(p))
	}
}
