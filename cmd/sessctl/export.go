package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/redact"
)

var exportCommand = newCommand("export", "export the active branch as Markdown, JSON or HTML")

func init() { exportCommand.run = runExport }

func runExport(e *env, args []string) int {
	fs := e.flags(exportCommand)
	store := storeFlag(fs)
	format := fs.String("format", "md", "output `FORMAT`: md, json or html")
	redact := fs.Bool("redact", false, "mask likely secrets (API keys, tokens, passwords, private keys)")
	leaf := fs.String("leaf", "", "export the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	out := fs.String("o", "", "write to `FILE` instead of stdout (its directory must exist)")
	force := fs.Bool("force", false, "let -o replace an existing file (never a session file, a link or a special file)")
	if code := e.parse(exportCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if code := e.oneSession(pos); code >= 0 {
		return code
	}
	renderDoc, ok := render.ExportFormat(*format)
	if !ok {
		return e.usageError("unknown format %s: use md, json or html", human.Quote(*format))
	}
	toFile := *out != "" && *out != "-"
	if *force && !toFile {
		return e.usageError("--force needs -o FILE")
	}
	sv, err := openSession(e, *store, pos[0], false)
	if err != nil {
		return e.fail(err)
	}
	defer sv.Close()
	path, err := sv.BranchTo(*leaf)
	if err != nil {
		return e.fail(err)
	}
	var dst io.Writer = e.stdout
	var of *render.OutputFile
	var held *bytes.Buffer
	switch {
	case toFile:
		if of, err = render.CreateOutput(nil, *out, sv.Path, *force); err != nil {
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
	err = renderDoc(w, sv, path, opts)
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
