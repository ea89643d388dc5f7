package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/release"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/term"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/replica"
)

// invokedAs is the program as it was invoked (os.Args[0]: ./bin/sessctl
// after make build), for commands sessctl suggests; "sessctl" when run
// in-process.
var invokedAs = "sessctl"

func main() {
	invokedAs = os.Args[0]
	// SIGTERM and SIGHUP end a command as Ctrl-C does.
	ctx, stop := term.SignalContext()
	term.CatchSIGPIPE()
	stdout := newStdout(os.Stdout, isTerminal(os.Stdout))
	stderr := newStdout(os.Stderr, isTerminal(os.Stderr))
	code := run(ctx, os.Args[1:], os.Stdin, stdout, stderr)
	if err := stdout.Flush(); err != nil && code == exitOK && !errors.Is(err, errStdoutClosed) {
		fmt.Fprintf(stderr, "sessctl: %v\n", err)
		code = exitFailure
	}
	_ = stderr.Flush()
	stop()
	os.Exit(code)
}

// Exit codes, as DESIGN.md fixes them.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitLocked   = 3 // another writer has the session: a lock holder, or a lock-less writer (pi) in the middle of a line
	exitCorrupt  = 4
	exitNotFound = 5
	exitIndex    = 6 // search: the search index could not be used, so the hits are unknown
)

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	name   string // the command's name, for messages
}

// command is one subcommand: its name, one-line summary, usage text with
// examples, and its function.
type command struct {
	name    string
	summary string
	usage   string
	hidden  bool
	run     func(e *env, args []string) int
}

// commands holds every subcommand; each command's file registers itself
// in its init function.
var commands = map[string]*command{}

// register adds a subcommand. Its run function may be set afterwards (in
// the same init), which keeps the usage text next to the flags.
func register(c *command) *command {
	if _, dup := commands[c.name]; dup {
		panic("sessctl: command registered twice: " + c.name)
	}
	commands[c.name] = c
	return c
}

// newCommand registers the subcommand name, whose usage text is
// help/NAME.txt; its file sets its run function in an init function.
func newCommand(name, summary string) *command {
	return register(&command{name: name, summary: summary, usage: helpText(name)})
}

// run is the whole CLI, callable in-process by tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		printUsage(stdout)
		return exitOK
	case "--version", "-version":
		info, ok := debug.ReadBuildInfo()
		fmt.Fprintf(stdout, "sessctl %s\n", release.Describe(info, ok))
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "sessctl: unknown command %s\nhint: run 'sessctl help' for the list of commands\n", human.Quote(name))
		return exitUsage
	}
	return c.run(&env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, name: name}, args[1:])
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "sessctl: inspect, fork, branch, compact, verify and migrate agent sessions\n\nUsage:\n  sessctl <command> [arguments] [flags]\n\nFlags may come before, between or after the arguments; '--' ends them\n(for an argument that starts with '-').\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	width := 10
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, commands[n].summary)
	}
	fmt.Fprint(w, "\nRun 'sessctl help <command>' for a command's flags and examples,\n'sessctl --version' for the version.\n")
}

// flags makes a command's flag set; usage goes to stderr on a bad flag and
// to stdout for -h.
func (e *env) flags(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("sessctl "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args, the one parser of every command: flags and
// positional arguments may come in any order ("show SESSION --full" is
// "show --full SESSION"). An argument "--" ends the flags: everything
// after it is positional, so a TEXT that starts with '-' goes as
// "-- -text". A lone "-" is positional (standard input, where it means
// that). The flag set tells which flags take a value: a bool flag takes
// none (--json), another flag takes the next argument (--leaf ID, even one
// that starts with '-') unless it is joined (--leaf=ID). After parse,
// fs.Args() holds the positional arguments in their order. It returns -1
// to go on, or the exit code to return.
func (e *env) parse(c *command, fs *flag.FlagSet, args []string) int {
	flags, pos := splitArgs(fs, args)
	err := fs.Parse(flags)
	if err == nil {
		// The flags are set; parsing "--" and the positional arguments
		// sets nothing more and leaves them as fs.Args().
		err = fs.Parse(append([]string{"--"}, pos...))
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(e.stdout, c, fs)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "sessctl: %s: %s\n", c.name, flagError(fs, err))
		fmt.Fprintf(e.stderr, "hint: run 'sessctl help %s'\n", c.name)
		return exitUsage
	}
	return -1
}

// flagError words an error of fs.Parse with the flags as the usage lines
// write them (--json, but -o), and for an unknown flag adds the known one
// it most likely meant ("did you mean --json?", human.DidYouMean).
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if s := human.DidYouMean(strings.TrimPrefix(name, "-"), known); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
		return msg
	}
	for _, form := range []string{"for flag -", "flag needs an argument: -"} {
		if i := strings.Index(msg, form); i >= 0 {
			name, _, _ := strings.Cut(msg[i+len(form):], ":")
			return msg[:i+len(form)-1] + dashed(name) + msg[i+len(form)+len(name):]
		}
	}
	return msg
}

// dashed is a flag as the usage lines write it: --json, but -o.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// splitArgs separates the flags of args (each with its value, in their
// order) from the positional arguments (in theirs), as parse describes.
// An unknown flag goes with the flags, alone, for fs.Parse to report.
func splitArgs(fs *flag.FlagSet, args []string) (flags, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(pos, args[i+1:]...)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(a[1:], "-")
		if strings.Contains(name, "=") {
			continue // --name=value
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, pos
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n", strings.TrimSpace(c.usage))
	if fs != nil {
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprint(w, "\nFlags:\n")
			// As flag.PrintDefaults lists them, each named as the usage
			// lines name it (dashed).
			var b strings.Builder
			fs.SetOutput(&b)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			for _, line := range strings.SplitAfter(b.String(), "\n") {
				if rest, ok := strings.CutPrefix(line, "  -"); ok && len(rest) > 1 && !strings.ContainsAny(rest[1:2], " \t\n") {
					line = "  --" + rest
				}
				io.WriteString(w, line)
			}
		}
	}
}

// usageError reports a usage mistake.
func (e *env) usageError(format string, a ...any) int {
	fmt.Fprintf(e.stderr, "sessctl: %s: %s\n", e.name, fmt.Sprintf(format, a...))
	fmt.Fprintf(e.stderr, "hint: run 'sessctl help %s'\n", e.name)
	return exitUsage
}

// emptySession reports an empty SESSION argument (sessctl show "") as
// the usage mistake it is; it returns -1 when arg is not empty.
func (e *env) emptySession(arg string) int {
	if arg != "" {
		return -1
	}
	return e.usageError("SESSION is empty: give a file path, a session id or a unique id prefix")
}

// fail prints err with a hint and returns the exit code its kind maps to.
func (e *env) fail(err error) int {
	if errors.Is(err, errStdoutClosed) {
		// The reader of the output went away: the command has nothing
		// more to do, and that is not a failure.
		return exitOK
	}
	fmt.Fprintf(e.stderr, "sessctl: %s: %v\n", e.name, err)
	if h := hintFor(err); h != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", h)
	}
	return exitCode(err)
}

// exitCode maps an error to the exit code of its kind.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, engine.ErrLocked), errors.Is(err, engine.ErrBusy):
		return exitLocked
	case errors.Is(err, engine.ErrCorrupt), errors.Is(err, engine.ErrUnsupportedVersion):
		return exitCorrupt
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return exitNotFound
	case errors.Is(err, errAmbiguous), errors.Is(err, errEmptySession), errors.Is(err, layout.ErrUnknownPlace):
		return exitUsage
	}
	return exitFailure
}

func hintFor(err error) string {
	switch {
	case errors.Is(err, engine.ErrLocked):
		return "another process is writing this session; retry with --wait DURATION, or see 'sessctl who'"
	case errors.Is(err, engine.ErrBusy):
		return "a process that takes no lock (pi) is writing this session and its last line is unfinished; retry when it is idle"
	case errors.Is(err, engine.ErrCorrupt):
		return "run 'sessctl verify' for details; 'sessctl repair' salvages a damaged file into a new one"
	case errors.Is(err, engine.ErrUnsupportedVersion):
		return "this file was written by a newer version; upgrade sessctl"
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return "check the path or id; 'sessctl list --all' shows every session"
	case errors.Is(err, errAmbiguous):
		return "give more characters of the id, or the file's path"
	case errors.Is(err, sessionfile.ErrSessionOwned):
		return "write the output to another file; --force never replaces a session's files"
	case errors.Is(err, compaction.ErrCommandTimeout):
		return "the summary command ran out of time; raise --summary-timeout (0: no limit) or use a faster model"
	case errors.Is(err, compaction.ErrOutputTooLarge):
		return "a summary should be short; check the command, or raise --summary-max-bytes (0: no limit)"
	case errors.Is(err, replica.ErrNoBucket):
		return "create the bucket (or the directory) first: sessctl sync never creates one"
	case errors.Is(err, fs.ErrPermission):
		return ownerHint(err)
	}
	return ""
}
