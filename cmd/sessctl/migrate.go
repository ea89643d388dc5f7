package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strconv"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/migrate"
)

var migrateCommand = &command{
	name:    "migrate",
	summary: "upgrade version 1 and 2 session files to version 3",
	usage:   helpText("migrate"),
}

func init() { register(migrateCommand).run = runMigrate }

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
	files, skipped, err := sessionFilesIn(e.ctx, fs.Args())
	if err != nil {
		return e.fail(err)
	}
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	prog := newProgress(e.stderr, "migrating", len(files))
	rep := &migrateReport{dryRun: *dry}
	// What the walk of a directory left out (a directory it could not
	// read, a named pipe) is a file that was not migrated.
	for _, err := range skipped {
		l := rep.add(skippedPath(err), migrate.FileResult{}, err)
		if !*asJSON {
			printMigrateLine(out, e, l)
		}
	}
	for i, path := range files {
		prog.update(i)
		res, err := fileStore(path, engine.StoreOptions{Command: "sessctl migrate"}).Migrate(e.ctx, path,
			engine.MigrateOptions{DryRun: *dry, NoBackup: *noBackup, Wait: *wait > 0, WaitFor: *wait})
		l := rep.add(path, res, err)
		if !*asJSON {
			prog.done()
			printMigrateLine(out, e, l)
		}
	}
	prog.done()
	failed := rep.count(migrateStatusFailed)
	if *asJSON {
		out.Write(rep.appendJSON(nil))
	} else {
		fmt.Fprintf(out, "%s: %d migrated, %d would be migrated, %d already version 3, %d failed\n",
			human.Plural(len(rep.files), "file", "files"), rep.count(migrateStatusMigrated), rep.count(migrateStatusWould), rep.count(migrateStatusCurrent), failed)
	}
	return migrateExit(rep)
}

// migrateExit is the exit code of a run: 3 when only held sessions failed
// (a retry may succeed), 1 when a file failed for another reason than
// its content (a full disk, a read-only or special file, a permission),
// 4 when only corrupt or too new files failed.
func migrateExit(rep *migrateReport) int {
	if rep.count(migrateStatusFailed) == 0 {
		return exitOK
	}
	if rep.onlyLocked() {
		return exitLocked
	}
	for _, l := range rep.files {
		if l.err != nil && !errors.Is(l.err, engine.ErrLocked) && exitCode(l.err) != exitCorrupt {
			return exitFailure
		}
	}
	return exitCorrupt
}

func printMigrateLine(out *bufio.Writer, e *env, l migrateLine) {
	ver := func(v float64) string { return "v" + strconv.FormatFloat(v, 'f', -1, 64) }
	switch l.status {
	case "failed":
		// Failures are diagnostics: stderr, with a hint. The error names
		// the file.
		out.Flush()
		fmt.Fprintf(e.stderr, "sessctl: migrate: %v\n", l.err)
		if h := hintFor(l.err); h != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", h)
		}
	case "current":
		fmt.Fprintf(out, "%s: %s, nothing to do\n", human.QuotePath(l.path), ver(l.from))
	default:
		verb := "migrated"
		if l.status == "would-migrate" {
			verb = "would migrate"
		}
		fmt.Fprintf(out, "%s: %s %s -> %s, %s, %s dropped", human.QuotePath(l.path), verb, ver(l.from), ver(l.to), human.Plural(l.entries, "entry", "entries"), human.Plural(l.malformed, "malformed line", "malformed lines"))
		if l.backup != "" {
			fmt.Fprintf(out, ", backup %s", human.QuotePath(l.backup))
		}
		fmt.Fprintln(out)
	}
}

// skippedPath is the path an error of a store walk names.
func skippedPath(err error) string {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}

// sessionFilesIn expands the PATH arguments of migrate: a file as it is
// (whatever its type: the migration says what is wrong with it), a
// directory to its session files as engine.Store.Files finds them, and
// what the walk left out as skipped. A path that does not exist fails
// with engine.ErrNotFound.
func sessionFilesIn(ctx context.Context, paths []string) (files []string, skipped []error, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return nil, nil, fmt.Errorf("%s: %w", p, engine.ErrNotFound)
			}
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, skip, err := storeFiles(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range found {
			files = append(files, f.Path)
		}
		skipped = append(skipped, skip...)
	}
	return files, skipped, nil
}

// storeFiles walks the store in dir (engine.Store.Files): its session
// files, and what the walk left out.
func storeFiles(ctx context.Context, dir string) (files []engine.File, skipped []error, err error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	for f, err := range st.Files(ctx) {
		switch {
		case err == nil:
			files = append(files, f)
		case f.Path == "":
			return nil, nil, err
		default:
			skipped = append(skipped, err)
		}
	}
	return files, skipped, nil
}
