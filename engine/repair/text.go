package repair

import (
	"fmt"
	"io"

	"github.com/sessctl/sessctl/internal/human"
)

// maxFindingsShown bounds the findings of one kind in the human output.
const maxFindingsShown = 10

// WriteText writes the report as 'sessctl verify' prints it: the file,
// ok or the number of problems, its version and entries, then each
// problem and note, at most maxFindingsShown of one kind.
func (r *Report) WriteText(w io.Writer) {
	facts := human.Plural(r.Entries, "entry", "entries")
	if r.Version != nil {
		facts = fmt.Sprintf("version %v, %s", *r.Version, facts)
	}
	switch n := len(r.Problems); n {
	case 0:
		fmt.Fprintf(w, "%s: ok (%s)\n", human.QuotePath(r.Path), facts)
	case 1:
		fmt.Fprintf(w, "%s: 1 problem (%s)\n", human.QuotePath(r.Path), facts)
	default:
		fmt.Fprintf(w, "%s: %d problems (%s)\n", human.QuotePath(r.Path), n, facts)
	}
	list := func(prefix string, fs []Finding) {
		shown := map[string]int{}
		hidden := map[string]int{}
		var kinds []string
		for _, f := range fs {
			if shown[f.Kind] == maxFindingsShown {
				if hidden[f.Kind] == 0 {
					kinds = append(kinds, f.Kind)
				}
				hidden[f.Kind]++
				continue
			}
			shown[f.Kind]++
			fmt.Fprintf(w, "  %s%s: %s\n", prefix, f.Kind, f.Message)
		}
		for _, k := range kinds {
			fmt.Fprintf(w, "  %s%s: ... and %d more\n", prefix, k, hidden[k])
		}
	}
	list("", r.Problems)
	list("note: ", r.Notes)
}

// WriteText writes the result as 'sessctl repair' prints it: nothing to
// repair, or the output file, each change, the counts, and the command
// that checks the output and puts it in place.
func (r *Result) WriteText(w io.Writer) {
	if r.Output == nil {
		fmt.Fprintf(w, "%s: nothing to repair; nothing written\n", human.QuotePath(r.Path))
	} else {
		fmt.Fprintf(w, "%s -> %s\n", human.QuotePath(r.Path), human.QuotePath(*r.Output))
		for _, c := range r.Changes {
			if c.Line > 0 {
				fmt.Fprintf(w, "  line %d: %s\n", c.Line, c.Message)
			} else {
				fmt.Fprintf(w, "  %s\n", c.Message)
			}
		}
		fmt.Fprintf(w, "%s kept, %s dropped; the original is unchanged.\n", human.Plural(r.Entries, "entry", "entries"), human.Plural(r.Dropped, "line", "lines"))
	}
}
