package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/redact"
)

var exportCommand = &command{
	name:    "export",
	summary: "export the active branch as Markdown, JSON or HTML",
	usage: `
Usage: sessctl export [--format md|json|html] [--redact] [--leaf ID]
                      [-o FILE [--force]] SESSION

Writes the active branch of a session (root to leaf, or to --leaf ID, a
full id or a unique prefix) as a document, on stdout or into FILE. FILE
is written whole or not at all (a temporary file beside it, mode 0600,
renamed into place). Its directory must exist. An existing FILE is
replaced only with --force, and never, even then, when it is a session
file (the one exported, or any file whose first line is a session
header), a directory, a symbolic link, a device, a named pipe or a
socket. The document is streamed, so a large session is not held twice
(but for --redact without -o).

  md    Markdown: a title and the session's details, then one section per
        message. Thinking is in a collapsible <details> block, a tool call
        is its name and its arguments as a JSON block, a tool result is a
        code block; compaction and branch summaries, custom messages and
        model or thinking level changes are marked. Images are noted, not
        embedded.
  html  One self-contained page: inline CSS, no scripts, nothing loaded
        from anywhere (a Content-Security-Policy forbids it); images are
        embedded as data: URIs. Every text is HTML-escaped.
  json  One object:
          {"format": "sessctl-export/1", "path": FILE, "header": HEADER,
           "name": NAME, "leaf": ID, "messages": [ITEM...]}
        HEADER is the stored header object; NAME and ID are null when
        absent. Each ITEM is {"id": ENTRY_ID, "type": ENTRY_TYPE,
        "timestamp": ISO, "label": LABEL (only when labelled), "message":
        MSG}, one per entry of the branch that carries conversation: a
        message entry's stored message; a custom_message as {"role":
        "custom", ...}; a branch_summary as {"role": "branchSummary", ...}
        (skipped when empty) and a compaction as {"role":
        "compactionSummary", ...}, the shapes pi's buildSessionContext
        gives them. Model and thinking level changes, labels, names and
        custom entries are not messages and are left out.

--redact masks likely secrets in the content of the output (message
text, tool arguments and results, summaries, custom data, the session's
name, labels). It leaves alone image data and what describes the file:
its path, the header's id, time, working directory and parent session,
and the entries' types, ids, parent ids and times. What is masked,
replaced by [REDACTED]:

  - private keys: "-----BEGIN ... PRIVATE KEY-----" blocks (the body; the
    BEGIN and END lines stay), to the end of the text when unterminated;
  - assignments: the value after password, passwd, secret, token, apikey,
    api_key, api-key, access_key, private_key (any case, with any prefix
    and one "_word" suffix, so GITHUB_TOKEN and SECRET_KEY count) followed
    by = or :, quoted or not ("password": "x", token=abc, SECRET_KEY: x);
  - "Bearer <token>" (the token, when it has a digit or symbol);
  - API key shapes: sk-... (OpenAI, Anthropic), ghp_/gho_/ghu_/ghs_/ghr_...
    and github_pat_... (GitHub), xoxa-/xoxb-/xoxp-/xoxo-/xoxr-/xoxs-...
    (Slack), AKIA/ASIA + 16 (AWS access key ids), AIza + 35 (Google);
  - long high-entropy tokens: runs of 32 or more of [A-Za-z0-9+/_=-] that
    mix upper case, lower case and digits with at least 4.5 bits of
    entropy per character (hex digests, UUIDs and paths are left alone;
    a path is judged one component at a time).

Redaction is a safety net, not a guarantee: read the export before sharing
it. It fails closed: when a line cannot be masked, the export fails and
writes nothing (no FILE; on stdout, a redacted document is held until all
of it is masked).

The file is opened read-only. SESSION is a file path, a session id or a
unique id prefix (see --store).

Examples:
  sessctl export 390d8e15 > session.md
  sessctl export --format html --redact -o share.html 390d8e15
  sessctl export --format json session.jsonl | jq '.messages[].message.role'
`,
}

func init() { register(exportCommand).run = runExport }

func runExport(e *env, args []string) int {
	fs := e.flags(exportCommand)
	store := storeFlag(fs)
	format := fs.String("format", "md", "output `FORMAT`: md, json or html")
	redact := fs.Bool("redact", false, "mask likely secrets (API keys, tokens, passwords, private keys)")
	leaf := fs.String("leaf", "", "export the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	out := fs.String("o", "", "write to `FILE` instead of stdout (its directory must exist)")
	force := fs.Bool("force", false, "let -o replace an existing file (never a session file, a link or a special file)")
	pos, code := e.parseArgs(exportCommand, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(pos[0]); code >= 0 {
		return code
	}
	switch *format {
	case "md", "markdown", "json", "html":
	default:
		return e.usageError("unknown format %q: use md, json or html", *format)
	}
	toFile := *out != "" && *out != "-"
	if *force && !toFile {
		return e.usageError("--force needs -o FILE")
	}
	sv, err := openView(e, *store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	path, err := sv.branch(*leaf)
	if err != nil {
		return e.fail(err)
	}
	var dst io.Writer = e.stdout
	var of *render.OutputFile
	var held *bytes.Buffer
	switch {
	case toFile:
		if of, err = render.CreateOutput(*out, sv.Path, *force); err != nil {
			return e.fail(forceHint(err))
		}
		dst = of
	case *redact:
		// Redaction fails closed: a redacted document reaches stdout only
		// once every line of it could be masked.
		held = &bytes.Buffer{}
		dst = held
	}
	var opts render.Options
	if *redact {
		opts.Redactor = exportRedactor
	}
	// The document streams out: a large session is never held twice
	// (but for --redact on stdout).
	w := bufio.NewWriterSize(dst, 1<<16)
	switch *format {
	case "md", "markdown":
		err = render.Markdown(w, sv.Session, path, opts)
	case "html":
		err = render.HTML(w, sv.Session, path, opts)
	case "json":
		err = render.JSON(w, sv.Session, path, opts)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if of != nil {
		if err != nil {
			of.Abort()
			return e.fail(err)
		}
		if err := of.Commit(); err != nil {
			return e.fail(forceHint(err))
		}
		return exitOK
	}
	if err != nil {
		return e.fail(err)
	}
	if held != nil {
		if _, err := e.stdout.Write(held.Bytes()); err != nil {
			return e.fail(err)
		}
	}
	return exitOK
}

// forceHint adds to the error for an existing -o FILE how to replace it.
func forceHint(err error) error {
	if errors.Is(err, render.ErrOutputExists) {
		return fmt.Errorf("%w; add --force to replace it", err)
	}
	return err
}

// exportRedactor masks secrets for --redact (a variable so that tests can
// make redaction fail).
var exportRedactor render.Redactor = redact.Rules{}
