package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/internal/demo"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
)

var demoCommand = newCommand("demo", "build a sample session in a temporary store and show it")

func init() { demoCommand.run = runDemo }

func runDemo(e *env, args []string) int {
	fs := e.flags(demoCommand)
	keep := fs.Bool("keep", false, "keep the temporary store and print its path")
	if code := e.parse(demoCommand, fs, args); code >= 0 {
		return code
	}
	root, err := os.MkdirTemp("", "sessctl-demo-")
	if err != nil {
		return e.fail(err)
	}
	if !*keep {
		defer os.RemoveAll(root)
	}
	agentDir := filepath.Join(root, "agent")
	file, err := demo.WriteSession(e.ctx, agentDir)
	if err != nil {
		return e.fail(err)
	}
	out := e.stdout
	step := func(title string) { fmt.Fprintf(out, "\n== %s\n", title) }

	step("1. the library wrote one JSONL file, exactly as pi writes it")
	fmt.Fprintf(out, "%s\n", human.QuotePath(file))
	data, err := os.ReadFile(file)
	if err != nil {
		return e.fail(err)
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(out, "  %s\n", human.OneLine(line, 110))
	}

	step("2. sessctl list --dir " + human.ShellQuote(filepath.Dir(file)))
	if code := run(e.ctx, []string{"list", "--dir", filepath.Dir(file)}, e.stdin, out, e.stderr); code != 0 {
		return code
	}

	step("3. sessctl dump FILE (excerpt: leaf, branch, labels, name)")
	var buf bytes.Buffer
	if code := run(e.ctx, []string{"dump", file}, e.stdin, &buf, e.stderr); code != 0 {
		return code
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &state); err != nil {
		return e.fail(err)
	}
	for _, k := range []string{"sessionId", "leafId", "sessionName", "branch", "labels"} {
		fmt.Fprintf(out, "  %-12s %s\n", k+":", state[k])
	}
	var entries []json.RawMessage
	_ = json.Unmarshal(state["entries"], &entries)
	fmt.Fprintf(out, "  %-12s %d (all branches)\n", "entries:", len(entries))

	step("4. sessctl context FILE (what the model is sent at the leaf)")
	buf.Reset()
	if code := run(e.ctx, []string{"context", file}, e.stdin, &buf, e.stderr); code != 0 {
		return code
	}
	var ctx struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Summary string          `json:"summary"`
		} `json:"messages"`
		ThinkingLevel string          `json:"thinkingLevel"`
		Model         json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(buf.Bytes(), &ctx); err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(out, "  model %s, thinking %s, %d messages:\n", ctx.Model, human.Quote(ctx.ThinkingLevel), len(ctx.Messages))
	for _, m := range ctx.Messages {
		text := m.Summary
		if text == "" {
			text = string(m.Content)
		}
		fmt.Fprintf(out, "    %-14s %s\n", m.Role, human.OneLine(text, 80))
	}
	// What to try next, each line a command that runs as printed from
	// where this one ran (the program as it was invoked: ./bin/sessctl
	// after make build), its purpose a shell comment.
	prog, f := human.ShellQuote(invokedAs), human.ShellQuote(file)
	try := [][2]string{
		{prog + " demo --keep", "keep the sample store, and get commands to explore it"},
		{prog + " help", "every command; help COMMAND for its flags and examples"},
	}
	if *keep {
		fmt.Fprintf(out, "\nThe store is kept at %s\n", human.QuotePath(root))
		try = [][2]string{
			{prog + " show --full " + f, "the conversation on its active branch, in full"},
			{prog + " tree " + f, "every branch of the session, with the entry ids"},
			{prog + " stats " + f, "tokens and cost"},
			{prog + " serve --store " + human.ShellQuote(layout.SessionsDir(agentDir)), "browse the store in a web browser; Ctrl-C stops it"},
			{"rm -r " + human.ShellQuote(root), "remove the store when done"},
		}
	}
	step("Try next")
	for _, t := range try {
		fmt.Fprintf(out, "  %s  # %s\n", t[0], t[1])
	}
	return exitOK
}
