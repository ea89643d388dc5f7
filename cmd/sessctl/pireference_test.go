package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestCompactAsPi runs 'sessctl compact --dry-run --json --reasoning' on
// 40 random sessions written by the reference pi's own SessionManager
// (scripts/pi-gen.mjs), keeping 100, 1,000 and 4,000 tokens, and compares
// every preparation with pi's prepareCompaction and the requests its
// compact() sends a reasoning model at the session's thinking level: the
// first kept entry, tokens before, split turn, the numbers of messages to
// summarise and of turn-prefix messages, the file lists, the thinking
// level, each request's budget and reasoning level, and a refusal where
// pi has nothing to compact.
func TestCompactAsPi(t *testing.T) {
	mutStore(t)
	node, modules := testenv.Pi(t)
	files := testenv.PiGenerate(t, node, modules, filepath.Join(t.TempDir(), "sessions"), 30, 40)
	keeps := []int{100, 1000, 4000}
	type request struct {
		MaxTokens int    `json:"maxTokens"`
		Reasoning string `json:"reasoning"`
	}
	type prep struct {
		Nothing             bool      `json:"nothing"`
		FirstKeptEntryID    string    `json:"firstKeptEntryId"`
		TokensBefore        *float64  `json:"tokensBefore"`
		IsSplitTurn         bool      `json:"isSplitTurn"`
		MessagesToSummarize int       `json:"messagesToSummarize"`
		TurnPrefixMessages  int       `json:"turnPrefixMessages"`
		ReadFiles           []string  `json:"readFiles"`
		ModifiedFiles       []string  `json:"modifiedFiles"`
		ThinkingLevel       string    `json:"thinkingLevel"`
		Requests            []request `json:"requests"`
	}
	var pi struct {
		Prepare map[string]map[string]prep `json:"prepare"`
	}
	testenv.PiReference(t, node, modules, map[string]any{"prepare": map[string]any{"files": files, "keeps": keeps}}, &pi)
	good, total := 0, 0
	for i, f := range files {
		for _, keep := range keeps {
			total++
			want := pi.Prepare[f][strconv.Itoa(keep)] // a reasoning of null decodes as ""
			out, errOut, code := mutRun(t, "", "compact", f, "--dry-run", "--json", "--reasoning", "--keep-tokens", strconv.Itoa(keep))
			if want.Nothing {
				if code != exitFailure || !(strings.Contains(errOut, "already compacted") || strings.Contains(errOut, "nothing to compact")) {
					t.Errorf("session %d keep %d: pi has nothing to compact; sessctl: exit %d, %s", i, keep, code, errOut)
					continue
				}
				good++
				continue
			}
			if code != 0 {
				t.Errorf("session %d keep %d: exit %d: %s", i, keep, code, errOut)
				continue
			}
			var got prep
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("session %d (%s) keep %d: sessctl compact differs from pi (-pi +sessctl):\n%s", i, filepath.Base(f), keep, d)
				continue
			}
			good++
		}
	}
	t.Logf("sessctl compact: %d/%d preparations as pi's", good, total)
}
