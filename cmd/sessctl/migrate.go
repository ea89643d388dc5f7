package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/migrate"
)

var migrateCommand = newCommand("migrate", "upgrade version 1 and 2 session files to version 3")

func init() { migrateCommand.run = runMigrate }

func runMigrate(e *env, args []string) int {
	fs := e.flags(migrateCommand)
	dry := fs.Bool("dry-run", false, "report what would change, write nothing")
	noBackup := fs.Bool("no-backup", false, "do not keep the original as <file>.v<N>.bak")
	asJSON := fs.Bool("json", false, "print JSON")
	wait := waitFlag(fs)
	if code := e.parse(migrateCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return e.usageError("expected at least one PATH")
	}
	files, skipped, err := engine.FilesBelow(e.ctx, engine.StoreOptions{}, fs.Args()...)
	if err != nil {
		return e.fail(err)
	}
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	prog := newProgress(e.stderr, "migrating", len(files))
	rep := &migrate.Report{DryRun: *dry}
	// What the walk of a directory left out (a directory it could not
	// read, a named pipe) is a file that was not migrated.
	for _, err := range skipped {
		l := rep.AddUnread(err)
		if !*asJSON {
			printMigrateLine(out, e, l)
		}
	}
	for i, path := range files {
		prog.update(i)
		res, err := fileStore(path, engine.StoreOptions{Command: "sessctl migrate"}).Migrate(e.ctx, path,
			engine.MigrateOptions{DryRun: *dry, NoBackup: *noBackup, Wait: *wait > 0, WaitFor: *wait})
		l := rep.Add(path, res, err)
		if !*asJSON {
			prog.done()
			printMigrateLine(out, e, l)
		}
	}
	prog.done()
	if *asJSON {
		out.Write(rep.AppendJSON(nil))
	} else {
		fmt.Fprintln(out, rep.Summary())
	}
	return migrateExit(rep)
}

// migrateExit is the exit code of a run: 3 when only held sessions failed
// (a retry may succeed), 1 when a file failed for another reason than
// its content (a full disk, a read-only or special file, a permission),
// 4 when only corrupt or too new files failed.
func migrateExit(rep *migrate.Report) int {
	if rep.Count(migrate.StatusFailed) == 0 {
		return exitOK
	}
	code := exitLocked
	for _, l := range rep.Files {
		switch {
		case l.Err == nil || errors.Is(l.Err, engine.ErrLocked):
		case exitCode(l.Err) != exitCorrupt:
			return exitFailure
		default:
			code = exitCorrupt
		}
	}
	return code
}

func printMigrateLine(out *bufio.Writer, e *env, l migrate.ReportLine) {
	if l.Status != migrate.StatusFailed {
		fmt.Fprintln(out, l.Text())
		return
	}
	// Failures are diagnostics: stderr, with a hint. The error names the
	// file.
	out.Flush()
	fmt.Fprintf(e.stderr, "sessctl: migrate: %v\n", l.Err)
	if h := hintFor(l.Err); h != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", h)
	}
}
