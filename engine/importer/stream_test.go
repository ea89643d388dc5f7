package importer_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/codex"
)

// writeBigRollout writes a compressed Codex rollout of turns turns (a
// prompt, a tool call, its output of about 32 KB and the answer, with
// their usage), seeded, and returns the decompressed size.
func writeBigRollout(t *testing.T, path string, turns int) int64 {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(enc, 1<<20)
	var size int64
	line := func(format string, args ...any) {
		n, _ := fmt.Fprintf(w, format+"\n", args...)
		size += int64(n)
	}
	r := rand.New(rand.NewPCG(39, 4))
	words := strings.Fields("func main return if err nil package import struct type interface for range go defer select case chan map string int byte error")
	chunk := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString(`\n`)
		}
		return b.String()
	}
	block := chunk(4 << 10) // repeated, so that the file compresses well
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	ts := func(i int) string {
		return t0.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	}
	line(`{"timestamp":"%s","type":"session_meta","payload":{"id":"0195a1f0-0000-7000-8000-0000000000b9","timestamp":"%s","cwd":"/work/big","originator":"codex_cli_rs","cli_version":"0.171.0","source":"cli","model_provider":"openai"}}`, ts(0), ts(0))
	line(`{"timestamp":"%s","type":"turn_context","payload":{"cwd":"/work/big","model":"gpt-5.5","effort":"high"}}`, ts(1))
	for k := range turns {
		i := 10 + 10*k
		line(`{"timestamp":"%s","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"prompt %d: %s"}]}}`, ts(i), k, chunk(64))
		line(`{"timestamp":"%s","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"f%d.go\"]}","call_id":"call_%d"}}`, ts(i+1), k, k)
		line(`{"timestamp":"%s","type":"response_item","payload":{"type":"function_call_output","call_id":"call_%d","output":"%s%s\nProcess exited with code 0"}}`, ts(i+2), k, strings.Repeat(block, 6), chunk(8<<10))
		line(`{"timestamp":"%s","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer %d"}]}}`, ts(i+3), k)
		line(`{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":7,"total_tokens":%d}}}}`, ts(i+4), 100+k, 107+k)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return size
}

// TestImportStreamsLargeRollout: importing a compressed Codex rollout of
// many valid lines (issue 39: a 193 KB file of 2 GB of lines peaked at
// 8.1 GB) holds one line at a time and writes the session as it is
// converted: the peak heap is far below the decompressed size (256 MB
// here, 64 MB under the race detector, 2 GB with testenv.Stress), the
// session has every entry, first and last, and no temporary file is
// left beside it or in the temporary directory.
func TestImportStreamsLargeRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a 256 MB rollout")
	}
	turns := 8000
	switch {
	case testenv.Stress():
		turns = 64000
	case raceEnabled:
		turns = 2000
	}
	tmp := t.TempDir()
	path := filepath.Join(tmp, "codex", "sessions", "2026", "03", "01", "rollout-2026-03-01T09-00-00-0195a1f0-0000-7000-8000-0000000000b9.jsonl.zst")
	size := writeBigRollout(t, path, turns)
	st, _ := os.Stat(path)
	t.Logf("%d turns, %d bytes decompressed, %d compressed", turns, size, st.Size())

	agentDir := filepath.Join(tmp, "pi")
	spillDir := filepath.Join(tmp, "spill")
	if err := os.Mkdir(spillDir, 0o700); err != nil {
		t.Fatal(err)
	}
	im := importer.New(importer.Options{AgentDir: agentDir, Import: migrate.ImportOptions{TempDir: spillDir}})
	var results []importer.Result
	var problems []string
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	peak := testenv.PeakHeap(func() {
		im.Store(context.Background(), codex.Source{}, path, importer.Handler{
			Session: func(r importer.Result) { results = append(results, r) },
			Skip:    func(_ string, sk *migrate.Skip) { problems = append(problems, "skip "+sk.Reason) },
			Damage:  func(d *migrate.Damage) { problems = append(problems, d.Error()) },
			Fail:    func(err error) { problems = append(problems, err.Error()) },
			Warn:    func(err error) { problems = append(problems, err.Error()) },
		})
	})
	t.Logf("peak heap %.1f MB for %.1f MB of rollout", float64(peak)/(1<<20), float64(size)/(1<<20))
	if len(problems) > 0 || len(results) != 1 || results[0].Err != nil || results[0].Status != importer.StatusNew {
		t.Fatalf("problems %v, results %+v", problems, results)
	}
	// What the import keeps grows with the number of entries (a node of
	// the tree for each, under 1 KB), never with their bytes.
	entries := 4 + 4*turns
	bound := min(16<<20+uint64(entries)<<10, uint64(size)/4)
	if peak > bound {
		t.Errorf("peak heap %d bytes importing a rollout of %d bytes in %d entries; want under %d", peak, size, entries, bound)
	}

	// The session: a header, the provenance entry, the model and
	// thinking level, and four messages a turn, the last answer last.
	out := results[0].Path
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var first, last []byte
	n := 0
	for {
		l, err := br.ReadBytes('\n')
		if len(l) > 0 {
			n++
			switch n {
			case 5:
				first = l
			}
			last = l
		}
		if err != nil {
			break
		}
	}
	if want := 1 + 1 + 2 + 4*turns; n != want || results[0].Session.Entries() != want-1 {
		t.Errorf("%d lines (%d entries); want %d", n, results[0].Session.Entries(), want)
	}
	text := func(l []byte) string {
		e, err := jsonl.ParseEntry(l[:len(l)-1])
		if err != nil {
			return err.Error()
		}
		m, _ := e.Field("message")
		role, _ := jsonl.String(lookup(m, "role"))
		c := lookup(m, "content")
		var s string
		_ = jsonl.Elements(c, func(b []byte) bool {
			s, _ = jsonl.String(lookup(b, "text"))
			return false
		})
		return role + ": " + strings.SplitN(s, ":", 2)[0]
	}
	if got := text(first); got != "user: prompt 0" {
		t.Errorf("first message %q", got)
	}
	if got, want := text(last), fmt.Sprintf("assistant: answer %d", turns-1); got != want {
		t.Errorf("last message %q, want %q", got, want)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 2 { // the session and its .lock
		t.Errorf("beside the session: %v", ents)
	}
	if ents, _ := os.ReadDir(spillDir); len(ents) != 0 {
		t.Errorf("left in the temporary directory: %v", ents)
	}
}

func lookup(obj []byte, k string) []byte {
	v, _ := jsonl.Lookup(obj, k)
	return v
}
