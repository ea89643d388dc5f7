package web

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// The viewer's speed on big stores (make bench; never go test):
//
//	SESSCTL_WEB_BENCH_STORE      a store to use as it is (a directory of session files)
//	SESSCTL_WEB_BENCH_QUERY      a query (with hits) to time beside the search page's own
//	SESSCTL_WEB_BENCH_SESSIONS   else, sessions of a generated store (default 2000), over 40 cwds
//	SESSCTL_WEB_BENCH_SIZE       bytes per generated session (default 60000)
//	SESSCTL_WEB_BENCH_BIG        entries of the generated big session (default 100000, ~165 MB)
//	SESSCTL_WEB_BENCH_BIG_FILE   else, a big session to use as it is (alone in its folder)
//	SESSCTL_BENCH_DIR            where generated workloads are kept (default the temporary directory)
//
// Each benchmark reports the time to the first byte of the page (ttfb-ms:
// the response's headers; pages are rendered whole before they are sent,
// so this is the page's time on the server) and, for search, to the first
// hit (hit-ms), as medians of b.N requests with the slowest (max-ms).

func benchDir(b *testing.B) string {
	if d := os.Getenv("SESSCTL_BENCH_DIR"); d != "" {
		return d
	}
	return os.TempDir()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchStore returns the store to measure: SESSCTL_WEB_BENCH_STORE, or a
// generated one (kept for the next run).
func benchStore(b *testing.B) string {
	if s := os.Getenv("SESSCTL_WEB_BENCH_STORE"); s != "" {
		return s
	}
	n := envInt("SESSCTL_WEB_BENCH_SESSIONS", 2000)
	size := envInt("SESSCTL_WEB_BENCH_SIZE", 60000)
	dir := filepath.Join(benchDir(b), fmt.Sprintf("web-store-%d-%d", n, size))
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	b.Logf("generating %d sessions of ~%d bytes in %s", n, size, dir)
	for i := range n {
		cwd := fmt.Sprintf("/home/dev/project%02d", i%40)
		d := filepath.Join(dir, layout.CwdDirName(cwd))
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		name := layout.SessionFileName(start, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
		o := workload.Options{Seed: uint64(i)*7919 + 1, Entries: max(4, size/1000), ToolResultMin: 500, ToolResultMax: 6000,
			ImageEvery: -1, Start: start, Cwd: cwd}
		if _, err := workload.WriteFile(filepath.Join(d, name), o); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

// timed fetches url n times and returns the median and largest times to
// the first byte and to the first occurrence of mark in the body ("" for
// the whole body).
func timed(b *testing.B, c *http.Client, url, mark string) (ttfb, ttmark []time.Duration) {
	for b.Loop() {
		t0 := time.Now()
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %s", url, resp.Status)
		}
		ttfb = append(ttfb, time.Since(t0))
		if mark == "" {
			_, _ = io.Copy(io.Discard, resp.Body)
		} else {
			r := bufio.NewReaderSize(resp.Body, 1<<16)
			var seen strings.Builder
			for {
				line, err := r.ReadString('\n')
				seen.WriteString(line)
				if strings.Contains(line, mark) {
					break
				}
				if err != nil {
					b.Fatalf("%s: no %q in the page", url, mark)
				}
			}
			_, _ = io.Copy(io.Discard, r)
		}
		ttmark = append(ttmark, time.Since(t0))
		resp.Body.Close()
	}
	return ttfb, ttmark
}

func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, name+"-max-ms")
}

// benchServer starts a viewer of root with its listing read.
func benchServer(b *testing.B, root string) *server {
	s := newServer(b, Options{Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: root}},
		IndexDir: filepath.Join(benchDir(b), fmt.Sprintf("web-index-%s-%08x", filepath.Base(root), crc32.ChecksumIEEE([]byte(root)))), ListMaxAge: time.Hour})
	s.c.Timeout = 0 // a first search of a large store builds its index for minutes
	t0 := time.Now()
	s.h.list.invalidate()
	s.h.list.wait(time.Hour)
	ls := s.h.list.get(0)
	b.Logf("listing %d sessions took %v (the engine's List, in the background)", len(ls.rows), time.Since(t0).Round(time.Millisecond))
	return s
}

// BenchmarkListPage: the session list, warm (the listing in memory), the
// first page, one cwd's, a text filter matching nothing, a later page.
func BenchmarkListPage(b *testing.B) {
	s := benchServer(b, benchStore(b))
	// A cwd of the store (of the generated one: /home/dev/project07).
	cwd := "/home/dev/project07"
	if cwds := s.h.list.get(0).cwds; len(cwds) > 0 && !slices.Contains(cwds, cwd) {
		cwd = cwds[len(cwds)/2]
	}
	for _, q := range []string{"", "?cwd=" + url.QueryEscape(cwd), "?q=zzzz-no-such-text", "?page=3"} {
		name := "q=" + strings.TrimPrefix(q, "?")
		if strings.HasPrefix(q, "?cwd=") {
			name = "q=cwd" // the cwd named in the log
			b.Logf("cwd filter: %s", cwd)
		}
		b.Run(name, func(b *testing.B) {
			ttfb, all := timed(b, s.c, s.origin+"/"+q, "")
			report(b, "ttfb", ttfb)
			report(b, "page", all)
		})
	}
}

// BenchmarkSearchPage: a search, warm (the index built and up to date):
// the first byte (the form, sent before the search runs) and the first
// hit.
func BenchmarkSearchPage(b *testing.B) {
	s := benchServer(b, benchStore(b))
	t0 := time.Now()
	s.mustGet("/search?q=function")
	b.Logf("first search (builds the index) took %v", time.Since(t0).Round(time.Millisecond))
	queries := []string{"q=function", "q=function&role=user", "q=%22no+such+phrase+anywhere%22"}
	if q := os.Getenv("SESSCTL_WEB_BENCH_QUERY"); q != "" {
		queries = append(queries, "q="+url.QueryEscape(q))
	}
	for _, q := range queries {
		b.Run(q, func(b *testing.B) {
			mark := `<li class="hit">`
			if strings.Contains(q, "no+such") {
				mark = "No hits."
			}
			ttfb, hit := timed(b, s.c, s.origin+"/search?"+q, mark)
			report(b, "ttfb", ttfb)
			report(b, "hit", hit)
		})
	}
}

// BenchmarkBigSessionPage: a large session's page, cold (its file read
// again for each request: the view dropped) and warm.
func BenchmarkBigSessionPage(b *testing.B) {
	entries := envInt("SESSCTL_WEB_BENCH_BIG", 100000)
	dir := filepath.Join(benchDir(b), fmt.Sprintf("web-big-%d", entries))
	file := filepath.Join(dir, "2026-03-01T09-00-00-000Z_big.jsonl")
	if f := os.Getenv("SESSCTL_WEB_BENCH_BIG_FILE"); f != "" {
		// A session of its own folder (the folder is the store).
		file, dir = f, filepath.Dir(f)
	} else if _, err := os.Stat(file); err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if _, err := workload.WriteFile(file, workload.Options{Seed: 1, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := os.Stat(file)
	b.Logf("%s: %.0f MB", file, float64(fi.Size())/(1<<20))
	s := newServer(b, Options{Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: dir}}, ListMaxAge: time.Hour})
	s.c.Timeout = 0
	page := s.page(file)
	// The listing (the engine's, which reads the file for pi's list
	// fields) is read first, and not measured.
	s.h.list.invalidate()
	s.h.list.wait(time.Hour)
	b.Run("cold", func(b *testing.B) {
		var ttfb []time.Duration
		var peak uint64
		for b.Loop() {
			s.h.views.drop(file)
			p := heapPeak(func() {
				t0 := time.Now()
				s.mustGet(page)
				ttfb = append(ttfb, time.Since(t0))
			})
			peak = max(peak, p)
		}
		report(b, "page", ttfb)
		b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MB")
	})
	b.Run("warm", func(b *testing.B) {
		s.mustGet(page)
		_, all := timed(b, s.c, s.origin+page, "")
		report(b, "page", all)
	})
}

// BenchmarkLiveAppend: the time from an append to the session file to
// its entry in a live page's event stream (the default FollowInterval),
// for appends by sessctl's engine (the writer lock held) and by pi 0.73.1
// (its SessionManager, a process per append, no lock; skipped without
// pi), measured from when the writer has written the line.
func BenchmarkLiveAppend(b *testing.B) {
	s := newServer(b, Options{})
	f := writeFixture(b, s.root, "/w/app")
	ev := s.events(s.page(f.file))
	ev.waitFor(b, 0, "holder", func(string) bool { return true })
	b.Run("sessctl", func(b *testing.B) {
		w := openWriter(b, f.file)
		defer w.Close()
		var ds []time.Duration
		n := 0
		for b.Loop() {
			n++
			// Appends at different points of the follow's interval.
			time.Sleep(time.Duration(n%5) * 50 * time.Millisecond)
			m := ev.mark()
			id, err := w.AppendMessage(message.NewUser(fmt.Sprintf("live prompt %d", n), time.Now()))
			t0 := time.Now()
			if err != nil {
				b.Fatal(err)
			}
			ev.waitFor(b, m, "entries", func(d string) bool { return strings.Contains(d, `"`+id+`"`) })
			ds = append(ds, time.Since(t0))
		}
		report(b, "live", ds)
	})
	b.Run("pi", func(b *testing.B) {
		node, modules := testenv.Pi(b)
		var ds []time.Duration
		for b.Loop() {
			m := ev.mark()
			cmd := exec.Command(node, filepath.Join(testenv.RepoRoot(b), "scripts", "pi-writer.mjs"), modules, f.file, "30", "1", "40")
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			id, err := bufio.NewReader(out).ReadString('\n')
			t0 := time.Now()
			if err != nil {
				b.Fatalf("pi-writer: %v", err)
			}
			id = strings.TrimSpace(id)
			ev.waitFor(b, m, "entries", func(d string) bool { return strings.Contains(d, `"`+id+`"`) })
			ds = append(ds, time.Since(t0))
			if err := cmd.Wait(); err != nil {
				b.Fatalf("pi-writer: %v", err)
			}
		}
		report(b, "live", ds)
	})
}

// BenchmarkPageBesideIdleLiveStreams times a session page while 500 live
// streams of it are open and idle (SESSCTL_WEB_BENCH_STREAMS): what they
// cost the server between changes, which with one look per session for
// all its streams and a /proc scan only on a change is about nothing.
// It reports the lookups of the writer made during the run (lookups).
func BenchmarkPageBesideIdleLiveStreams(b *testing.B) {
	n := envInt("SESSCTL_WEB_BENCH_STREAMS", 500)
	s := newServer(b, Options{})
	f := writeFixture(b, s.root, "/w/app")
	page := s.page(f.file)
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n + 10}
	c := &http.Client{Jar: s.c.Jar, Transport: tr}
	for range n {
		resp, err := c.Get(s.origin + strings.Replace(page, "/s/", "/events/s/", 1))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { resp.Body.Close() })
	}
	time.Sleep(2 * time.Second) // the streams settle into idling
	l0 := s.h.lookups.Load()
	b.ResetTimer()
	for b.Loop() {
		s.mustGet(page)
	}
	b.ReportMetric(float64(s.h.lookups.Load()-l0), "lookups")
}
