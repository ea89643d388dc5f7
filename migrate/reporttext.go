package migrate

import (
	"fmt"
	"strconv"

	"github.com/sessctl/sessctl/internal/human"
)

// Text is the line for people of a file that did not fail: migrated (or
// would be), with its versions, entries, dropped lines and backup, or
// already current. A failed file's line is its error (Err), which names
// the file.
func (l ReportLine) Text() string {
	ver := func(v float64) string { return "v" + strconv.FormatFloat(v, 'f', -1, 64) }
	if l.Status == StatusCurrent {
		return fmt.Sprintf("%s: %s, nothing to do", human.QuotePath(l.Path), ver(l.From))
	}
	verb := "migrated"
	if l.Status == StatusWould {
		verb = "would migrate"
	}
	s := fmt.Sprintf("%s: %s %s -> %s, %s, %s dropped", human.QuotePath(l.Path), verb, ver(l.From), ver(float64(l.To)), human.Plural(l.Entries, "entry", "entries"), human.Plural(l.Malformed, "malformed line", "malformed lines"))
	if l.Backup != "" {
		s += fmt.Sprintf(", backup %s", human.QuotePath(l.Backup))
	}
	return s
}

// Summary is the report's last line for people: how many files, and
// how many of them by status.
func (r *Report) Summary() string {
	return fmt.Sprintf("%s: %d migrated, %d would be migrated, %d already version 3, %d failed", human.Plural(len(r.Files), "file", "files"),
		r.Count(StatusMigrated), r.Count(StatusWould), r.Count(StatusCurrent), r.Count(StatusFailed))
}
