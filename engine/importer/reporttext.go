package importer

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/internal/human"
)

// Text is the session's line of 'sessctl import”s table: source,
// source id, status, entries and the file written.
func (s ReportSession) Text() string {
	return fmt.Sprintf("%-8s %-36s %-9s %5d entries  %s", s.Source, human.QuotePath(s.SourceID), s.Status, s.Entries, human.QuotePath(s.File))
}

// Text is the skipped session's line of 'sessctl import”s table:
// source, source id, "skipped", the reason and the source file.
func (s ReportSkip) Text() string {
	return fmt.Sprintf("%-8s %-36s %-9s %s  %s", s.Source, human.QuotePath(s.SourceID), "skipped", s.Reason, human.QuotePath(s.SourcePath))
}

// WriteSummary writes the report's summary line for people to w: how
// many sessions were imported (or, for a dry run, would be) from how
// many stores, by status, and the damage skipped.
func (r *Report) WriteSummary(w io.Writer) error {
	ew := &errWriter{w: w}
	sum := &r.Summary
	verb := "imported"
	if sum.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(ew, "%s %s from %s: %d new, %d updated, %d unchanged", verb, human.Plural(sum.Sessions, "session", "sessions"), human.Plural(len(r.Stores), "store", "stores"), sum.New, sum.Updated, sum.Unchanged)
	if sum.Kept > 0 {
		fmt.Fprintf(ew, ", %d kept (changed since imported)", sum.Kept)
	}
	if sum.Failed > 0 {
		fmt.Fprintf(ew, ", %d failed", sum.Failed)
	}
	if sum.Skipped > 0 {
		fmt.Fprintf(ew, ", %d skipped (nothing to import)", sum.Skipped)
	}
	if sum.Damaged > 0 {
		fmt.Fprintf(ew, "; %s skipped", human.Plural(sum.Damaged, "damaged source line or file", "damaged source lines or files"))
	}
	if sum.DryRun {
		fmt.Fprint(ew, " (dry run: nothing written)")
	}
	fmt.Fprintln(ew)
	return ew.err
}

// WriteJSON writes the report as indented JSON to w: 'sessctl import
// --json'.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// errWriter remembers the first error of the writes through it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
