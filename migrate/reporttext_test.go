package migrate

import "testing"

// TestReportText checks the lines of a migration for people: migrated,
// would migrate, current, and the summary.
func TestReportText(t *testing.T) {
	for _, c := range []struct {
		l    ReportLine
		want string
	}{
		{ReportLine{Path: "/a\tb.jsonl", Status: StatusMigrated, From: 1, To: 3, Entries: 1, Malformed: 2, Backup: "/a.jsonl.v1.bak"},
			`"/a\tb.jsonl": migrated v1 -> v3, 1 entry, 2 malformed lines dropped, backup /a.jsonl.v1.bak`},
		{ReportLine{Path: "/c.jsonl", Status: StatusWould, From: 2, To: 3, Entries: 4}, "/c.jsonl: would migrate v2 -> v3, 4 entries, 0 malformed lines dropped"},
		{ReportLine{Path: "/d.jsonl", Status: StatusCurrent, From: 3}, "/d.jsonl: v3, nothing to do"},
	} {
		if got := c.l.Text(); got != c.want {
			t.Errorf("Text = %q, want %q", got, c.want)
		}
	}
	r := &Report{Files: []ReportLine{{}, {}}, counts: map[string]int{StatusMigrated: 1, StatusFailed: 1}}
	if got, want := r.Summary(), "2 files: 1 migrated, 0 would be migrated, 0 already version 3, 1 failed"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
