package main

var helpCommand = &command{
	name:    "help",
	summary: "show help for sessctl or one command",
	usage: `
Usage: sessctl help [COMMAND]

Without a command, lists every command. With one, shows its usage, flags
and examples.

Examples:
  sessctl help
  sessctl help list
`,
}

func init() { register(helpCommand).run = runHelp }

func runHelp(e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		return e.usageError("unknown command %q", args[0])
	}
	// Each command prints its own flags on -h.
	return c.run(&env{ctx: e.ctx, stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, name: c.name}, []string{"-h"})
}
