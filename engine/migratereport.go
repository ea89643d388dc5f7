package engine

import (
	"errors"
	"strconv"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// The statuses of a MigrateLine.
const (
	MigrateStatusMigrated = "migrated"      // the file was migrated
	MigrateStatusWould    = "would-migrate" // a dry run: it would be migrated
	MigrateStatusCurrent  = "current"       // it is at the current version already
	MigrateStatusFailed   = "failed"        // MigrateFile failed (Err says why)
)

// MigrateLine is what MigrateFile did to one file.
type MigrateLine struct {
	Path      string
	Status    string // one of the MigrateStatus constants
	From, To  float64
	Entries   int
	Malformed int
	Backup    string
	Err       error
}

// MigrateReport collects what MigrateFile did to several files, as
// 'sessctl migrate' reports it. The zero value is ready to use.
type MigrateReport struct {
	// DryRun makes migrated files count as MigrateStatusWould.
	DryRun bool
	Files  []MigrateLine
	counts map[string]int
	locked int
}

// Add records the result of MigrateFile for path and returns its line.
func (r *MigrateReport) Add(path string, res migrate.FileResult, err error) MigrateLine {
	l := MigrateLine{Path: path, From: res.From, To: float64(res.To), Entries: res.Entries, Malformed: res.Malformed, Backup: res.Backup, Err: err}
	switch {
	case err != nil:
		l.Status = MigrateStatusFailed
	case !res.Migrated:
		l.Status = MigrateStatusCurrent
	case r.DryRun:
		l.Status = MigrateStatusWould
	default:
		l.Status = MigrateStatusMigrated
	}
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[l.Status]++
	if errors.Is(err, ErrLocked) {
		r.locked++
	}
	r.Files = append(r.Files, l)
	return l
}

// Count returns how many files have a status.
func (r *MigrateReport) Count(status string) int { return r.counts[status] }

// OnlyLocked reports whether files failed and every failure was a
// session held by another writer, which a retry may get past.
func (r *MigrateReport) OnlyLocked() bool {
	return r.counts[MigrateStatusFailed] > 0 && r.counts[MigrateStatusFailed] == r.locked
}

// AppendJSON appends the report as the object 'sessctl migrate --json'
// prints: {"files": [{path, status, from, to, entries, malformed,
// backup?, error?}...], "migrated", "wouldMigrate", "current", "failed"}.
func (r *MigrateReport) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"files":[`...)
	for i, l := range r.Files {
		if i > 0 {
			dst = append(dst, ',')
		}
		b := jsonl.NewObject(256).String("path", l.Path).String("status", l.Status).
			Number("from", l.From).Number("to", l.To).Number("entries", float64(l.Entries)).
			Number("malformed", float64(l.Malformed))
		if l.Backup != "" {
			b.String("backup", l.Backup)
		}
		if l.Err != nil {
			b.String("error", l.Err.Error())
		}
		dst = append(dst, b.Bytes()...)
	}
	dst = append(dst, `],"migrated":`...)
	dst = strconv.AppendInt(dst, int64(r.Count(MigrateStatusMigrated)), 10)
	dst = append(dst, `,"wouldMigrate":`...)
	dst = strconv.AppendInt(dst, int64(r.Count(MigrateStatusWould)), 10)
	dst = append(dst, `,"current":`...)
	dst = strconv.AppendInt(dst, int64(r.Count(MigrateStatusCurrent)), 10)
	dst = append(dst, `,"failed":`...)
	dst = strconv.AppendInt(dst, int64(r.Count(MigrateStatusFailed)), 10)
	return append(dst, "}\n"...)
}
