package main

import (
	"embed"

	"github.com/sessctl/sessctl/internal/human"
)

// The usage text of each command is help/NAME.txt: printed by -h and
// 'sessctl help NAME', trimmed of surrounding blank lines.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText returns the usage text of the command name; a command without
// one is a build mistake, caught by every test that runs the CLI.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("sessctl: no usage text for " + name + ": " + err.Error())
	}
	return string(b)
}

var helpCommand = newCommand("help", "show help for sessctl or one command")

func init() { helpCommand.run = runHelp }

func runHelp(e *env, args []string) int {
	fs := e.flags(helpCommand)
	if code := e.parse(helpCommand, fs, args); code >= 0 {
		return code
	}
	switch fs.NArg() {
	case 0:
		printUsage(e.stdout)
		return exitOK
	case 1:
	default:
		return e.usageError("expected one COMMAND")
	}
	c, ok := commands[fs.Arg(0)]
	if !ok {
		return e.usageError("unknown command %s", human.Quote(fs.Arg(0)))
	}
	// Each command prints its own flags on -h.
	return c.run(&env{ctx: e.ctx, stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, name: c.name}, []string{"-h"})
}
