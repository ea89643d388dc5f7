package compaction

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestPrepareCasesArePis runs pi's own prepareCompaction (the reference
// release, testenv.PiVersion) on the path of every worked example and edge
// case, written as a session file, and checks that the case's want is
// pi's answer, and that Prepare gives it: so the expectations in the
// tables are pi's, not sessctl's. It also compares the requests compact()
// sends a reasoning model (budget and reasoning level) for each case, at
// the thinking levels "off" and "medium".
func TestPrepareCasesArePis(t *testing.T) {
	t.Parallel()
	node, modules := testenv.Pi(t)
	dir := t.TempDir()
	type fileCase struct {
		c     prepCase
		file  string
		level string
	}
	var cases []fileCase
	var files []string
	keeps := map[int]bool{}
	for _, list := range [][]prepCase{workedExamples, edgeCases} {
		for _, c := range list {
			for _, level := range []string{"off", "medium"} {
				var b pathBuilder
				c.build(&b)
				lines := b.lines
				if level != "off" {
					lines = append([]string{`{"type":"thinking_level_change","id":"t0","parentId":null,"timestamp":"2026-03-01T08:59:59.000Z","thinkingLevel":"` + level + `"}`}, lines...)
					if len(lines) > 1 {
						lines[1] = strings.Replace(lines[1], `"parentId":null`, `"parentId":"t0"`, 1)
					}
				}
				f := filepath.Join(dir, fmt.Sprintf("case-%02d-%s.jsonl", len(cases), level))
				data := `{"type":"session","version":3,"id":"s","timestamp":"2026-03-01T08:00:00.000Z","cwd":"/w"}` + "\n" + strings.Join(lines, "\n")
				if len(lines) > 0 {
					data += "\n"
				}
				if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				cases = append(cases, fileCase{c, f, level})
				files = append(files, f)
				keeps[c.keep] = true
			}
		}
	}
	var keepList []int
	for k := range keeps {
		keepList = append(keepList, k)
	}
	type piPrep struct {
		Nothing                  bool     `json:"nothing"`
		FirstKeptEntryID         string   `json:"firstKeptEntryId"`
		TokensBefore             *float64 `json:"tokensBefore"`
		IsSplitTurn              bool     `json:"isSplitTurn"`
		MessagesToSummarizeRoles []string `json:"messagesToSummarizeRoles"`
		TurnPrefixRoles          []string `json:"turnPrefixRoles"`
		PreviousSummary          *string  `json:"previousSummary"`
		ReadFiles                []string `json:"readFiles"`
		ModifiedFiles            []string `json:"modifiedFiles"`
		Requests                 []struct {
			MaxTokens int     `json:"maxTokens"`
			Reasoning *string `json:"reasoning"`
		} `json:"requests"`
	}
	var answer struct {
		Prepare map[string]map[string]piPrep `json:"prepare"`
	}
	testenv.PiReference(t, node, modules, map[string]any{"prepare": map[string]any{"files": files, "keeps": keepList}}, &answer)
	for _, fc := range cases {
		t.Run(fc.c.name+"/"+fc.level, func(t *testing.T) {
			t.Parallel()
			pi := answer.Prepare[fc.file][fmt.Sprint(fc.c.keep)]
			data, err := os.ReadFile(fc.file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")[1:]
			s := settingsKeep(fc.c.keep)
			s.Reasoning = true
			p, err := Prepare(parseLines(t, lines...), s)
			if pi.Nothing || err != nil {
				if !pi.Nothing || err == nil {
					t.Fatalf("pi has nothing to compact: %v; Prepare: %v", pi.Nothing, err)
				}
				if fc.level == "off" && fc.c.wantErr == nil {
					t.Errorf("pi has nothing to compact; the case wants %+v", fc.c.want)
				}
				return
			}
			if fc.level == "off" && fc.c.wantErr != nil {
				t.Fatalf("the case wants %v; pi prepares %+v", fc.c.wantErr, pi)
			}
			// The case's want, in pi's terms (the ids and roles of the
			// path as built, without the thinking level entry).
			w := fc.c.want
			got := prepSummary{FirstKept: pi.FirstKeptEntryID, Split: pi.IsSplitTurn, TurnStart: w.TurnStart,
				History: pi.MessagesToSummarizeRoles, Prefix: pi.TurnPrefixRoles, Files: FileLists{ReadFiles: pi.ReadFiles, ModifiedFiles: pi.ModifiedFiles},
				HistoryRequest: w.HistoryRequest, PrefixRequest: w.PrefixRequest}
			if fc.level != "off" && got.FirstKept == "t0" {
				got.FirstKept = "(the thinking level entry)"
			}
			if pi.TokensBefore != nil {
				got.TokensBefore = *pi.TokensBefore
			}
			if pi.PreviousSummary != nil {
				got.Previous = *pi.PreviousSummary
			}
			if fc.level == "off" {
				if diff := cmp.Diff(w, got); diff != "" {
					t.Errorf("the case's want is not pi's preparation (-want +pi):\n%s", diff)
				}
			}
			// sessctl's preparation of the same file, and its requests.
			ours := summarize(p)
			ours.TurnStart, ours.HistoryRequest, ours.PrefixRequest = w.TurnStart, w.HistoryRequest, w.PrefixRequest
			if ours.FirstKept == "t0" {
				ours.FirstKept = "(the thinking level entry)"
			}
			if diff := cmp.Diff(got, ours); diff != "" {
				t.Errorf("Prepare differs from pi (-pi +sessctl):\n%s", diff)
			}
			type req struct {
				MaxTokens int
				Reasoning string
			}
			var piReqs, ourReqs []req
			for _, r := range pi.Requests {
				rr := req{MaxTokens: r.MaxTokens}
				if r.Reasoning != nil {
					rr.Reasoning = *r.Reasoning
				}
				piReqs = append(piReqs, rr)
			}
			h, tp := p.Requests("")
			for _, r := range []*Request{h, tp} {
				if r != nil {
					ourReqs = append(ourReqs, req{r.MaxTokens, r.Reasoning})
				}
			}
			if diff := cmp.Diff(piReqs, ourReqs); diff != "" {
				t.Errorf("requests at thinking level %s differ from pi's (-pi +sessctl):\n%s", fc.level, diff)
			}
		})
	}
}
