package main

import (
	"errors"
	"strconv"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// The statuses of a migrateLine.
const (
	migrateStatusMigrated = "migrated"      // the file was migrated
	migrateStatusWould    = "would-migrate" // a dry run: it would be migrated
	migrateStatusCurrent  = "current"       // it is at the current version already
	migrateStatusFailed   = "failed"        // the migration failed (err says why)
)

// migrateLine is what a migration did to one file.
type migrateLine struct {
	path      string
	status    string // one of the migrateStatus constants
	from, to  float64
	entries   int
	malformed int
	backup    string
	err       error
}

// migrateReport collects what migrations did to several files, as
// 'sessctl migrate' reports it. The zero value is ready to use.
type migrateReport struct {
	// dryRun makes migrated files count as migrateStatusWould.
	dryRun bool
	files  []migrateLine
	counts map[string]int
	locked int
}

// add records the result of migrating path and returns its line.
func (r *migrateReport) add(path string, res migrate.FileResult, err error) migrateLine {
	l := migrateLine{path: path, from: res.From, to: float64(res.To), entries: res.Entries, malformed: res.Malformed, backup: res.Backup, err: err}
	switch {
	case err != nil:
		l.status = migrateStatusFailed
	case !res.Migrated:
		l.status = migrateStatusCurrent
	case r.dryRun:
		l.status = migrateStatusWould
	default:
		l.status = migrateStatusMigrated
	}
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[l.status]++
	if errors.Is(err, engine.ErrLocked) {
		r.locked++
	}
	r.files = append(r.files, l)
	return l
}

// count returns how many files have a status.
func (r *migrateReport) count(status string) int { return r.counts[status] }

// onlyLocked reports whether files failed and every failure was a
// session held by another writer, which a retry may get past.
func (r *migrateReport) onlyLocked() bool {
	return r.counts[migrateStatusFailed] > 0 && r.counts[migrateStatusFailed] == r.locked
}

// appendJSON appends the report as the object 'sessctl migrate --json'
// prints: {"files": [{path, status, from, to, entries, malformed,
// backup?, error?}...], "migrated", "wouldMigrate", "current", "failed"}.
func (r *migrateReport) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"files":[`...)
	for i, l := range r.files {
		if i > 0 {
			dst = append(dst, ',')
		}
		b := jsonl.NewObject(256).String("path", l.path).String("status", l.status).
			Number("from", l.from).Number("to", l.to).Number("entries", float64(l.entries)).
			Number("malformed", float64(l.malformed))
		if l.backup != "" {
			b.String("backup", l.backup)
		}
		if l.err != nil {
			b.String("error", l.err.Error())
		}
		dst = append(dst, b.Bytes()...)
	}
	dst = append(dst, `],"migrated":`...)
	dst = strconv.AppendInt(dst, int64(r.count(migrateStatusMigrated)), 10)
	dst = append(dst, `,"wouldMigrate":`...)
	dst = strconv.AppendInt(dst, int64(r.count(migrateStatusWould)), 10)
	dst = append(dst, `,"current":`...)
	dst = strconv.AppendInt(dst, int64(r.count(migrateStatusCurrent)), 10)
	dst = append(dst, `,"failed":`...)
	dst = strconv.AppendInt(dst, int64(r.count(migrateStatusFailed)), 10)
	return append(dst, "}\n"...)
}
