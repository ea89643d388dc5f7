package replica

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
)

// ReportProblems is what went wrong in a run, worded for people: one
// line per failed session, conflict, refused remote line, warning and
// skipped file (without a program's prefix), and how many sessions
// failed and remote lines were refused.
type ReportProblems struct {
	Lines           []string
	Failed, Refused int
}

// Problems words the sessions that failed, the conflicts, the remote
// lines refused, the warnings and what was skipped of a run.
func (r *Report) Problems() ReportProblems {
	var p ReportProblems
	for _, s := range r.Sessions {
		if s.Err != nil {
			p.Failed++
			p.Lines = append(p.Lines, fmt.Sprintf("%s %s: %v", s.Kind, human.QuotePath(s.Name), s.Err))
		}
		for _, c := range s.Conflicts {
			kept := ""
			switch {
			case len(c.Copies) == 0:
			case s.Kind == KindAgentUse:
				kept = "; both kept (the remote one as " + strings.Join(quotePaths(c.Copies), ", ") + ")"
			default:
				kept = "; both kept (as " + strings.Join(quotePaths(c.Copies), ", ") + ")"
			}
			p.Lines = append(p.Lines, fmt.Sprintf("%s %s: %s %s differs on the two sides%s",
				s.Kind, human.QuotePath(s.Name), conflictNoun(s.Kind), human.QuotePath(c.ID), kept))
		}
		for _, l := range s.Refused {
			p.Refused++
			p.Lines = append(p.Lines, fmt.Sprintf("%s %s: refused remote %s", s.Kind, human.QuotePath(s.Name), l))
		}
	}
	for _, w := range r.Warnings {
		p.Lines = append(p.Lines, fmt.Sprintf("warning: %v", w))
	}
	for _, w := range r.Skipped {
		p.Lines = append(p.Lines, fmt.Sprintf("skipped %v", w))
	}
	return p
}

// conflictNoun names what a conflict's ID is: an entry of a JSONL
// session, a file of an AgentUse one.
func conflictNoun(kind string) string {
	if kind == KindAgentUse {
		return "file"
	}
	return "entry"
}

// quotePaths returns the paths, each quoted when needed (human.QuotePath).
func quotePaths(ps []string) []string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = human.QuotePath(p)
	}
	return q
}

// WriteText writes the report of a run for people to w: a line per
// session that moved (per session, for the verb "status"), a summary
// line naming verb (with a prune's collected objects when verb starts
// with "prune"; verb "prune" itself deleted them), and a line per
// replicator of repls.
func (r *Report) WriteText(w io.Writer, verb string, repls []ReplicatorStats) error {
	bw := &errWriter{w: w}
	for _, s := range r.Sessions {
		if s.State == "in sync" || verb != "status" && (s.State == "new local" || s.State == "new remote") {
			continue // nothing moved (counted below)
		}
		detail := ""
		switch {
		case s.Pushed > 0 && s.Pulled > 0:
			detail = fmt.Sprintf(" (%d up, %d down)", s.Pushed, s.Pulled)
		case s.Pushed > 0:
			detail = fmt.Sprintf(" (%d up)", s.Pushed)
		case s.Pulled > 0:
			detail = fmt.Sprintf(" (%d down)", s.Pulled)
		}
		where := s.Path
		if where == "" {
			where = s.Name
		}
		bw.printf("%-12s %s%s\n", s.State, human.QuotePath(where), detail)
	}
	var parts []string
	for _, c := range r.Tally() {
		parts = append(parts, fmt.Sprintf("%d %s", c.N, c.State))
	}
	if len(parts) == 0 {
		parts = append(parts, "no sessions")
	}
	if strings.HasPrefix(verb, "prune") {
		what := "collected"
		if verb != "prune" {
			what = "to collect; nothing deleted"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", human.Plural(len(r.Collected), "object", "objects"), what, human.Bytes(int(r.CollectedBytes))))
	}
	bw.printf("%s: %s; %s, %s up, %s down\n", verb, strings.Join(parts, ", "), requestsText(r.Requests, r.RequestKinds), human.Bytes(int(r.Uploaded)), human.Bytes(int(r.Downloaded)))
	for _, x := range repls {
		state := "running"
		if x.Closed {
			state = "closed"
		}
		bw.printf("replicator pid %d on %s (%s, updated %s): %s shipped, %s for %s since %s\n",
			x.PID, human.Quote(x.Host), state, x.Updated.Local().Format("15:04:05"), human.Plural(int(x.Shipments), "generation", "generations"),
			requestsText(RequestCounts(x.Requests).Total(), RequestCounts(x.Requests)), human.Plural(x.Sessions, "session", "sessions"), x.Started.Local().Format("2006-01-02 15:04:05"))
	}
	return bw.err
}

// WriteJSON writes the report's JSON (Report.JSON) to w, indented, with
// repls as its replicators.
func (r *Report) WriteJSON(w io.Writer, repls []ReplicatorStats) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	j := r.JSON()
	j.Replicators = append(j.Replicators, repls...)
	return enc.Encode(j)
}

// requestsText says how many requests (total) of which kinds were sent:
// "5 requests (3 GET, 2 PUT)".
func requestsText(total int64, c RequestCounts) string {
	out := human.Plural(int(total), "request", "requests")
	var kinds []string
	for _, k := range []struct {
		n    int64
		name string
	}{{c.Get, "GET"}, {c.Put, "PUT"}, {c.List, "LIST"}, {c.Delete, "DELETE"}} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.name))
		}
	}
	if len(kinds) > 0 {
		out += " (" + strings.Join(kinds, ", ") + ")"
	}
	return out
}

// errWriter keeps the first write error; later writes are skipped.
type errWriter struct {
	w   io.Writer
	err error
}

func (b *errWriter) printf(format string, a ...any) {
	if b.err == nil {
		_, b.err = fmt.Fprintf(b.w, format, a...)
	}
}
