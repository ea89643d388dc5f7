package importer

import (
	"cmp"

	"github.com/sessctl/sessctl/migrate"
)

// Report collects what an import did, session by session, in the JSON
// shape of 'sessctl import --json'. Its slices are never nil, so they
// encode as [] when empty. Feed it from a Handler: AddSession from
// Handler.Session, AddSkip from Handler.Skip, AddDamage from
// Handler.Damage, and AddStore for each store imported.
type Report struct {
	Sessions []ReportSession `json:"sessions"`
	Skipped  []ReportSkip    `json:"skipped"`
	Damaged  []ReportDamage  `json:"damaged"`
	Stores   []ReportStore   `json:"stores"`
	Summary  Summary         `json:"summary"`
}

// ReportSession is one imported session of a Report.
type ReportSession struct {
	Source        string `json:"source"`
	SourceID      string `json:"sourceId"`
	SourcePath    string `json:"sourcePath"`
	ID            string `json:"id"`
	File          string `json:"file"`
	Status        string `json:"status"`
	Entries       int    `json:"entries"`
	Messages      int    `json:"messages"`
	Cwd           string `json:"cwd"`
	CwdFromSource bool   `json:"cwdFromSource"`
	ParentSession string `json:"parentSession,omitempty"`
	Error         string `json:"error,omitempty"`
}

// ReportDamage is damaged source data that was skipped.
type ReportDamage struct {
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Position string `json:"position,omitempty"`
	Error    string `json:"error"`
}

// ReportSkip is a source session that held nothing to import.
type ReportSkip struct {
	Source     string `json:"source"`
	SourceID   string `json:"sourceId"`
	SourcePath string `json:"sourcePath"`
	Reason     string `json:"reason"`
}

// ReportStore is a store that was imported.
type ReportStore struct {
	Source string `json:"source"`
	Path   string `json:"path"`
}

// Summary counts the sessions of a Report by status, and its skips and
// damage.
type Summary struct {
	Sessions  int  `json:"sessions"`
	New       int  `json:"new"`
	Updated   int  `json:"updated"`
	Unchanged int  `json:"unchanged"`
	Kept      int  `json:"kept"`
	Failed    int  `json:"failed"`
	Skipped   int  `json:"skipped"`
	Damaged   int  `json:"damaged"`
	DryRun    bool `json:"dryRun"`
}

// NewReport returns an empty Report of a run, a dry run or not.
func NewReport(dryRun bool) *Report {
	return &Report{Sessions: []ReportSession{}, Skipped: []ReportSkip{}, Damaged: []ReportDamage{}, Stores: []ReportStore{},
		Summary: Summary{DryRun: dryRun}}
}

// AddStore records a store imported from path.
func (r *Report) AddStore(source, path string) {
	r.Stores = append(r.Stores, ReportStore{Source: source, Path: path})
}

// AddSession records an imported session, counts it under its status,
// and returns its record.
func (r *Report) AddSession(res Result) ReportSession {
	s := res.Session
	line := ReportSession{
		Source: s.Source, SourceID: s.SourceID, SourcePath: cmp.Or(s.ReadFrom, s.SourcePath), ID: s.ID, File: res.Path,
		Entries: s.Entries(), Messages: s.Messages, Cwd: s.Cwd, CwdFromSource: s.CwdKnown, ParentSession: res.Parent,
		Status: res.Status,
	}
	if res.Err != nil && (res.Status == StatusKept || res.Status == StatusFailed) {
		line.Error = res.Err.Error()
	}
	r.Summary.Sessions++
	switch line.Status {
	case StatusNew:
		r.Summary.New++
	case StatusUpdated:
		r.Summary.Updated++
	case StatusUnchanged:
		r.Summary.Unchanged++
	case StatusKept:
		r.Summary.Kept++
	default:
		r.Summary.Failed++
	}
	r.Sessions = append(r.Sessions, line)
	return line
}

// AddSkip records a source session that gave nothing to import.
func (r *Report) AddSkip(source string, sk *migrate.Skip) {
	r.Summary.Skipped++
	r.Skipped = append(r.Skipped, ReportSkip{Source: source, SourceID: sk.SourceID, SourcePath: sk.Path, Reason: sk.Reason})
}

// AddDamage records damaged source data that was skipped.
func (r *Report) AddDamage(d *migrate.Damage) {
	r.Summary.Damaged++
	r.Damaged = append(r.Damaged, ReportDamage{Path: d.Path, Line: d.Line, Position: d.Pos, Error: d.Err.Error()})
}
