package render

import (
	"fmt"
	"io"
	"math"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// CompactionReport is what 'sessctl compact' reports of a compaction
// made, or of a dry run's (DryRun, no EntryID).
type CompactionReport struct {
	Path    string // the session file
	EntryID string // the compaction entry appended
	// FirstKeptKind names the first kept entry's kind (EntryKind).
	FirstKeptKind string
	// Summarizer names what wrote the summary: "caller", "command",
	// "offline" or "dry-run".
	Summarizer   string
	DryRun       bool
	Instructions string // the extra instructions of the summary requests
	Prep         *compaction.Preparation
	Result       compaction.Result
	Settings     compaction.Settings
}

// JSON returns the report as one JSON object: 'sessctl compact --json'.
// A dry run's has null entryId and summary, and the summary requests
// that would be sent.
func (o *CompactionReport) JSON() []byte {
	prep, res := o.Prep, o.Result
	b := jsonl.NewObject(512+len(res.Summary)).String("session", o.Path)
	if o.DryRun {
		b.Null("entryId")
	} else {
		b.String("entryId", o.EntryID)
	}
	b.String("firstKeptEntryId", prep.FirstKeptEntryID).
		Number("tokensBefore", prep.TokensBefore).
		Bool("isSplitTurn", prep.IsSplitTurn).
		Number("messagesToSummarize", float64(len(prep.MessagesToSummarize))).
		Number("turnPrefixMessages", float64(len(prep.TurnPrefixMessages))).
		Raw("readFiles", stringsJSON(res.Details.ReadFiles)).
		Raw("modifiedFiles", stringsJSON(res.Details.ModifiedFiles)).
		String("summarizer", o.Summarizer)
	if o.DryRun {
		b.Null("summary")
	} else {
		b.String("summary", res.Summary)
	}
	b.Number("keepRecentTokens", float64(o.Settings.KeepRecentTokens)).
		Number("reserveTokens", float64(o.Settings.ReserveTokens)).
		String("thinkingLevel", prep.ThinkingLevel)
	if o.DryRun {
		b.Raw("requests", prep.RequestsJSON(o.Instructions))
	}
	return b.Bytes()
}

// Text writes the report for people to w.
func (o *CompactionReport) Text(w io.Writer) error {
	prep, res := o.Prep, o.Result
	ew := &errWriter{w: w}
	if o.DryRun {
		fmt.Fprintf(ew, "would compact %s (dry run, nothing written)\n", human.QuotePath(o.Path))
	} else {
		fmt.Fprintf(ew, "compacted %s\n", human.QuotePath(o.Path))
		fmt.Fprintf(ew, "  entry:          %s\n", o.EntryID)
	}
	split := ""
	if prep.IsSplitTurn {
		split = ", inside a turn"
	}
	fmt.Fprintf(ew, "  first kept:     %s (%s%s)\n", human.QuotePath(prep.FirstKeptEntryID), o.FirstKeptKind, split)
	fmt.Fprintf(ew, "  tokens before:  %s\n", tokensText(prep.TokensBefore))
	fmt.Fprintf(ew, "  summarised:     %s", human.Plural(len(prep.MessagesToSummarize), "message", "messages"))
	if len(prep.TurnPrefixMessages) > 0 {
		fmt.Fprintf(ew, ", plus %d from the start of the cut turn", len(prep.TurnPrefixMessages))
	}
	fmt.Fprintf(ew, "\n")
	if !o.DryRun {
		fmt.Fprintf(ew, "  summary:        %s, %s\n", o.Summarizer, human.Plural(len([]rune(res.Summary)), "character", "characters"))
	}
	fmt.Fprintf(ew, "  read files:     %s\n", pathList(res.Details.ReadFiles))
	fmt.Fprintf(ew, "  modified files: %s\n", pathList(res.Details.ModifiedFiles))
	return ew.err
}

// EntryKind names an entry's kind for output: its type, or a message's
// role and "message" ("assistant message").
func EntryKind(en *engine.Entry) string {
	if en.Type == jsonl.TypeMessage {
		msg, _ := en.Field("message")
		role, _ := jsonl.Lookup(msg, "role")
		if r, ok := jsonl.String(role); ok {
			return r + " message"
		}
	}
	return en.Type
}

// pathList renders paths for one line of human output: "a, b" (each
// quoted when needed) or "(none)".
func pathList(ps []string) string {
	if len(ps) == 0 {
		return "(none)"
	}
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += ", "
		}
		out += human.QuotePath(p)
	}
	return out
}

// tokensText is a token count, or what an incomplete usage record
// (NaN) means.
func tokensText(f float64) string {
	if math.IsNaN(f) {
		return "unknown (a usage record is incomplete)"
	}
	return string(jsonl.AppendNumber(nil, f))
}

func stringsJSON(ss []string) []byte {
	b, _ := jsonl.Marshal(ss)
	return b
}
