package migrate

import (
	"errors"
	"io/fs"
	"strconv"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// The statuses of a ReportLine.
const (
	StatusMigrated = "migrated"      // the file was migrated
	StatusWould    = "would-migrate" // a dry run: it would be migrated
	StatusCurrent  = "current"       // it is at the current version already
	StatusFailed   = "failed"        // the migration failed (Err says why)
)

// ReportLine is what a migration did to one file.
type ReportLine struct {
	Path      string
	Status    string // one of the Status constants
	From      float64
	To        int
	Entries   int
	Malformed int
	Backup    string
	Err       error
}

// Report collects what migrations did to several files. The zero value
// is ready to use.
type Report struct {
	// DryRun makes migrated files count as StatusWould.
	DryRun bool
	// Files holds a line per file, in the order they were added.
	Files  []ReportLine
	counts map[string]int
}

// Add records the result of migrating path (as a migration of it
// returned res and err) and returns its line.
func (r *Report) Add(path string, res FileResult, err error) ReportLine {
	l := ReportLine{Path: path, From: res.From, To: res.To, Entries: res.Entries, Malformed: res.Malformed, Backup: res.Backup, Err: err}
	switch {
	case err != nil:
		l.Status = StatusFailed
	case !res.Migrated:
		l.Status = StatusCurrent
	case r.DryRun:
		l.Status = StatusWould
	default:
		l.Status = StatusMigrated
	}
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[l.Status]++
	r.Files = append(r.Files, l)
	return l
}

// AddUnread records a file that a walk left out unread as failed: err
// is the walk's error for it, which names it when it is an
// *fs.PathError (as engine.FilesBelow's are).
func (r *Report) AddUnread(err error) ReportLine {
	var pe *fs.PathError
	path := ""
	if errors.As(err, &pe) {
		path = pe.Path
	}
	return r.Add(path, FileResult{}, err)
}

// Count returns how many files have a status.
func (r *Report) Count(status string) int { return r.counts[status] }

// AppendJSON appends the report as one JSON object and a newline:
// {"files": [{path, status, from, to, entries, malformed, backup?,
// error?}...], "migrated", "wouldMigrate", "current", "failed"}.
func (r *Report) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"files":[`...)
	for i, l := range r.Files {
		if i > 0 {
			dst = append(dst, ',')
		}
		b := jsonl.NewObject(256).String("path", l.Path).String("status", l.Status).
			Number("from", l.From).Number("to", float64(l.To)).Number("entries", float64(l.Entries)).
			Number("malformed", float64(l.Malformed))
		if l.Backup != "" {
			b.String("backup", l.Backup)
		}
		if l.Err != nil {
			b.String("error", l.Err.Error())
		}
		dst = append(dst, b.Bytes()...)
	}
	for _, c := range []struct{ key, status string }{
		{`],"migrated":`, StatusMigrated}, {`,"wouldMigrate":`, StatusWould},
		{`,"current":`, StatusCurrent}, {`,"failed":`, StatusFailed},
	} {
		dst = strconv.AppendInt(append(dst, c.key...), int64(r.Count(c.status)), 10)
	}
	return append(dst, "}\n"...)
}
