package compaction

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Offline is a deterministic Summarizer that needs no model. It builds a
// summary in the requested format from the messages alone: the user's
// requests as goals, the last request as work in progress, the files read
// and modified, counts of tool calls by tool, failed tool calls, and the
// last thing the assistant said. An update keeps the previous summary,
// quoted, under "Earlier Summary". It cannot record decisions or
// constraints, and says so. The same messages always give the same text.
type Offline struct{}

// Offline summaries cut long texts to these many characters.
const (
	offlineRequestChars = 300
	offlineReplyChars   = 400
	offlineEarlierChars = 8000
	offlineGoals        = 10
)

// offlineFacts is what Offline reads from the messages.
type offlineFacts struct {
	requests   []string
	replies    int
	lastReply  string
	calls      map[string]int
	callTotal  int
	shell      int
	failed     int
	lastFailed string
	summaries  int
	files      FileLists
}

func gatherFacts(msgs []Message) offlineFacts {
	var f offlineFacts
	f.calls = make(map[string]int)
	var ops FileOps
	for _, m := range msgs {
		ops.AddMessage(m.Raw)
		c := fields(m.Raw, "role", "content", "command", "isError", "toolName")
		role, _ := jsonl.String(c[0])
		switch role {
		case "user":
			text, _ := jsonl.String(c[1])
			if jsonl.KindOf(c[1]) == jsonl.KindArray {
				text = joinTextBlocks(c[1])
			}
			if t := oneLine(text, offlineRequestChars); t != "" {
				f.requests = append(f.requests, t)
			}
		case "assistant":
			f.replies++
			var texts []string
			eachElem(c[1], func(b []byte) {
				bf := fields(b, "type", "text", "name")
				switch t, _ := jsonl.String(bf[0]); t {
				case "text":
					if s, _ := jsonl.String(bf[1]); strings.TrimSpace(s) != "" {
						texts = append(texts, s)
					}
				case "toolCall":
					name, _ := jsonl.String(bf[2])
					if name == "" {
						name = "(unnamed)"
					}
					f.calls[name]++
					f.callTotal++
				}
			})
			if len(texts) > 0 {
				f.lastReply = oneLine(strings.Join(texts, " "), offlineReplyChars)
			}
		case "bashExecution":
			f.shell++
			if cmd, _ := jsonl.String(c[2]); cmd != "" {
				f.requests = append(f.requests, "ran `"+oneLine(cmd, offlineRequestChars)+"`")
			}
		case "toolResult":
			if truthy(c[3]) {
				f.failed++
				name, _ := jsonl.String(c[4])
				f.lastFailed = strings.TrimSpace(name + ": " + oneLine(joinTextBlocks(c[1]), 200))
			}
		case "compactionSummary", "branchSummary":
			f.summaries++
		}
	}
	f.files = ops.Lists()
	return f
}

// Summarize builds the summary for req.
func (Offline) Summarize(ctx context.Context, req Request) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	f := gatherFacts(req.Messages)
	var b strings.Builder
	switch req.Kind {
	case KindTurnPrefix:
		b.WriteString("## Original Request\n")
		if len(f.requests) > 0 {
			b.WriteString(f.requests[0])
		} else {
			b.WriteString("(not in the summarised part)")
		}
		b.WriteString("\n\n## Early Progress\n")
		f.writeActivity(&b)
		b.WriteString("\n## Context for Suffix\n")
		if f.lastReply != "" {
			fmt.Fprintf(&b, "- Last assistant message before the kept part: %s\n", f.lastReply)
		} else {
			b.WriteString("- (none)\n")
		}
	default:
		f.writeGoal(&b)
		b.WriteString("\n## Constraints & Preferences\n(none recorded)\n")
		b.WriteString("\n## Progress\n### Done\n")
		f.writeActivity(&b)
		b.WriteString("\n### In Progress\n")
		if n := len(f.requests); n > 0 {
			fmt.Fprintf(&b, "- [ ] %s\n", f.requests[n-1])
		} else {
			b.WriteString("(none)\n")
		}
		b.WriteString("\n### Blocked\n")
		if f.failed > 0 {
			fmt.Fprintf(&b, "- %d tool call%s failed along the way; the last: %s\n", f.failed, plural(f.failed, "", "s"), f.lastFailed)
		} else {
			b.WriteString("(none)\n")
		}
		b.WriteString("\n## Key Decisions\n(not recorded: sessctl wrote this summary offline, without a model)\n")
		b.WriteString("\n## Next Steps\n")
		if n := len(f.requests); n > 0 {
			fmt.Fprintf(&b, "1. Continue with the latest request: %s\n", f.requests[n-1])
		} else {
			b.WriteString("1. Wait for the user's next request\n")
		}
		if req.Kind != KindBranch {
			b.WriteString("\n## Critical Context\n")
			if f.lastReply != "" {
				fmt.Fprintf(&b, "- Last assistant message: %s\n", f.lastReply)
			} else {
				b.WriteString("(none)\n")
			}
		}
		if req.Kind == KindHistoryUpdate && req.PreviousSummary != "" {
			b.WriteString("\n## Earlier Summary\n")
			b.WriteString(quote(cutChars(stripFileLists(req.PreviousSummary), offlineEarlierChars)))
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// writeGoal lists the user's requests: all of them up to offlineGoals,
// otherwise the first three, a count, and the latest ones.
func (f *offlineFacts) writeGoal(b *strings.Builder) {
	b.WriteString("## Goal\n")
	reqs := f.requests
	if len(reqs) == 0 {
		if f.summaries > 0 {
			b.WriteString("(no new requests; see the earlier summary)\n")
		} else {
			b.WriteString("(no user requests in the summarised part)\n")
		}
		return
	}
	if len(reqs) <= offlineGoals {
		for _, r := range reqs {
			fmt.Fprintf(b, "- %s\n", r)
		}
		return
	}
	for _, r := range reqs[:3] {
		fmt.Fprintf(b, "- %s\n", r)
	}
	tail := offlineGoals - 3
	fmt.Fprintf(b, "- (%d more requests)\n", len(reqs)-3-tail)
	for _, r := range reqs[len(reqs)-tail:] {
		fmt.Fprintf(b, "- %s\n", r)
	}
}

// writeActivity lists replies, tool calls by tool and the files.
func (f *offlineFacts) writeActivity(b *strings.Builder) {
	fmt.Fprintf(b, "- [x] %d assistant repl%s, %d tool call%s%s\n",
		f.replies, plural(f.replies, "y", "ies"), f.callTotal, plural(f.callTotal, "", "s"), f.callList())
	if f.shell > 0 {
		fmt.Fprintf(b, "- [x] %d shell command%s run by the user\n", f.shell, plural(f.shell, "", "s"))
	}
	if len(f.files.ModifiedFiles) > 0 {
		fmt.Fprintf(b, "- [x] Modified: %s\n", strings.Join(f.files.ModifiedFiles, ", "))
	}
	if len(f.files.ReadFiles) > 0 {
		fmt.Fprintf(b, "- [x] Read: %s\n", strings.Join(f.files.ReadFiles, ", "))
	}
}

// callList renders " (bash 3, edit 2)": most used first, then by name.
func (f *offlineFacts) callList() string {
	if len(f.calls) == 0 {
		return ""
	}
	names := make([]string, 0, len(f.calls))
	for n := range f.calls {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := f.calls[b] - f.calls[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, f.calls[n])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine folds white space to single spaces and cuts s to n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	return cutChars(s, n)
}

// cutChars cuts s to at most n characters, marking a cut with "...".
func cutChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n-3]), unicode.IsSpace) + "..."
}

// stripFileLists removes the file-list tags pi appends to a summary; the
// new summary gets its own.
func stripFileLists(s string) string {
	for _, tag := range []string{"\n\n<read-files>\n", "\n\n<modified-files>\n"} {
		if i := strings.Index(s, tag); i >= 0 && (strings.HasSuffix(s, "</read-files>") || strings.HasSuffix(s, "</modified-files>")) {
			s = s[:i]
		}
	}
	return strings.TrimRight(s, "\n")
}

// quote prefixes every line with "> ".
func quote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}
