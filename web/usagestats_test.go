package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestUsageCountsAsStats: the viewer's cost column and stats page count
// a session as engine/stats does, pi 1.x's usage entries and the
// requests of compactions, branch summaries and tools included (the
// viewer counted assistant messages only), per model and in total.
func TestUsageCountsAsStats(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"u1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":1,"output":1,"cost":{"total":0.01}}}}`,
		`{"type":"usage","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","kind":"title","provider":"p","model":"small","usage":{"input":5,"output":5,"cost":{"total":0.1}}}`,
		`{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","summary":"S","firstKeptEntryId":"d","tokensBefore":1,"usage":{"input":100,"output":10,"cost":{"total":1}}}`,
		`{"type":"branch_summary","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","fromId":"d","summary":"B","usage":{"input":20,"output":2}}`,
		`{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"1","toolName":"code","content":[],"usage":{"input":3,"output":3}}}`,
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var entries []*jsonl.Entry
	for _, l := range lines[1:] {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, &e)
	}
	want := stats.Count(entries)

	u, err := readUsage(vfs.OS(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u.total.TotalTokens != want.Usage.TotalTokens || human.Cost(u.total.Cost.Total) != human.Cost(want.Usage.Cost.Total) {
		t.Errorf("total %d tokens, %s; stats counts %d, %s", u.total.TotalTokens, human.Cost(u.total.Cost.Total),
			want.Usage.TotalTokens, human.Cost(want.Usage.Cost.Total))
	}
	got := map[string]int64{}
	msgs := map[string]int{}
	for dm, t := range u.by {
		got[dm.model] += t.usage.TotalTokens
		msgs[dm.model] += t.messages
	}
	for _, m := range want.Models {
		if got[m.Model] != m.Usage.TotalTokens || msgs[m.Model] != m.Messages {
			t.Errorf("%s: %d tokens, %d messages; stats counts %d, %d", m.Model, got[m.Model], msgs[m.Model], m.Usage.TotalTokens, m.Messages)
		}
	}
	if len(got) != len(want.Models) || u.msgs != 1 {
		t.Errorf("models %v, %d messages; stats counts %d models, 1 message", got, u.msgs, len(want.Models))
	}
}

// TestStatsPageDaysAreStats: the stats page's figures per day and per
// model are engine/stats's (stats.Dir's usage per day and model, read
// here without the index) for a store over several days and models, and
// a line appended to a session is counted at the next reading.
func TestStatsPageDaysAreStats(t *testing.T) {
	var skew atomic.Int64
	s := newServer(t, Options{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	answer := func(id string, at time.Time, model string, in int, cost float64) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":null,"timestamp":%q,"message":{"role":"assistant","provider":"p","model":%q,"usage":{"input":%d,"output":1,"cost":{"total":%v}}}}`,
			id, at.UTC().Format(time.RFC3339Nano), model, in, cost)
	}
	var files []string
	for i := range 3 {
		lines := []string{fmt.Sprintf(`{"type":"session","version":3,"id":"d%d","timestamp":%q,"cwd":"/w/%d"}`, i, t0.Format(time.RFC3339Nano), i)}
		for j := range 5 {
			lines = append(lines, answer(fmt.Sprintf("a%d", j), t0.Add(time.Duration(i*11+j*13)*time.Hour), fmt.Sprintf("m%d", (i+j)%3), 100*(j+1), 0.01*float64(i*5+j+1)))
		}
		f := filepath.Join(s.root, fmt.Sprintf("--w-%d--", i), fmt.Sprintf("s%d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// table returns the rows of one of the page's tables: key -> the
	// messages, tokens and cost cells.
	table := func(body, id string) map[string]string {
		_, tb, _ := strings.Cut(body, `id="`+id+`"`)
		tb, _, _ = strings.Cut(tb, "</table>")
		out := map[string]string{}
		for _, m := range regexp.MustCompile(`<tr><td>([^<]*)</td>(.*?)</tr>`).FindAllStringSubmatch(tb, -1) {
			cells := regexp.MustCompile(`<td class="num">([^<]*)</td>`).FindAllStringSubmatch(m[2], -1)
			if len(cells) < 3 {
				t.Fatalf("%s row %q", id, m[0])
			}
			// Per day: messages, tokens, cost; per model: messages,
			// input, output, cache, tokens, cost.
			out[m[1]] = cells[0][1] + " " + cells[len(cells)-2][1] + " " + cells[len(cells)-1][1]
		}
		return out
	}
	// fromStats is what stats counts, in the page's words.
	fromStats := func() (days, models map[string]string) {
		byDay, byModel := map[string]*tally{}, map[string]*tally{}
		_, err := stats.Dir(context.Background(), s.root, stats.DirOptions{NoIndex: true, Usage: func(f *stats.FileUsage) {
			for _, d := range f.Days {
				for _, x := range []struct {
					m map[string]*tally
					k string
				}{{byDay, d.Day}, {byModel, d.Model}} {
					if x.m[x.k] == nil {
						x.m[x.k] = &tally{}
					}
					x.m[x.k].messages += d.Messages
					x.m[x.k].usage.Add(d.Usage)
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		words := func(m map[string]*tally) map[string]string {
			out := map[string]string{}
			for k, x := range m {
				out[k] = fmt.Sprintf("%d %s %s", x.messages, count(x.usage.TotalTokens), human.Cost(x.usage.Cost.Total))
			}
			return out
		}
		return words(byDay), words(byModel)
	}
	page := func(want string) string {
		t.Helper()
		for range 200 {
			body := s.mustGet("/stats")
			if !strings.Contains(body, "Reading the sessions") && strings.Contains(body, want) {
				return body
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("the stats page never says %q", want)
		return ""
	}
	check := func(step, body string) {
		t.Helper()
		days, models := fromStats()
		if len(days) < 4 || len(models) < 3 {
			t.Fatalf("%s: stats counts %d days and %d models: not a store of several", step, len(days), len(models))
		}
		if diff := cmp.Diff(days, table(body, "perday")); diff != "" {
			t.Errorf("%s: per day (-stats +page):\n%s", step, diff)
		}
		if diff := cmp.Diff(models, table(body, "permodel")); diff != "" {
			t.Errorf("%s: per model (-stats +page):\n%s", step, diff)
		}
	}
	check("first", page("3 of 3 session files counted"))

	late := t0.Add(100 * time.Hour)
	appendRaw(t, files[1], answer("late", late, "late-model", 5000, 2.5))
	skew.Add(int64(time.Minute)) // the last reading is old: the page starts another
	s.mustGet("/stats")
	body := page("3 of 3 session files counted")
	if !strings.Contains(table(body, "permodel")["p/late-model"], "5,001") || table(body, "perday")[late.Local().Format(time.DateOnly)] == "" {
		t.Errorf("the appended answer is not counted: %v %v", table(body, "permodel"), table(body, "perday"))
	}
	check("appended", body)
}
