package main

import (
	"slices"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
)

var dumpCommand = newCommand("dump", "print a session's full state as JSON")

func init() { dumpCommand.run = runDump }

func runDump(e *env, args []string) int {
	fs := e.flags(dumpCommand)
	store := storeFlag(fs)
	only := fs.String("fields", "", "print only these comma-separated top-level `FIELDS` (e.g. leafId,branch,context); an unknown name is an error")
	byLeaf := fs.Bool("context-by-leaf", false, "add contextByLeaf and contextAtNullLeaf (grows with the square of the session length)")
	au := addAgentUseFlags(fs, false)
	if code := e.parse(dumpCommand, fs, args); code >= 0 {
		return code
	}
	if code := e.oneSession(fs.Args()); code >= 0 {
		return code
	}
	if useAgentUse(*store, fs.Arg(0)) {
		if *only != "" {
			return e.usageError("--fields applies to JSONL sessions, not AgentUse ones")
		}
		return runShowAgentUse(e, *au.project, fs.Arg(0), false, true)
	}
	o := render.StateOptions{ContextByLeaf: *byLeaf, NoInfo: true}
	if *only != "" {
		known := render.StateFields(o)
		o.Fields = map[string]bool{}
		for _, f := range strings.Split(*only, ",") {
			f = strings.TrimSpace(f)
			switch {
			case f == "":
				continue
			case slices.Contains(known, f):
				o.Fields[f] = true
			case f == "contextByLeaf" || f == "contextAtNullLeaf":
				return e.usageError("field %s needs --context-by-leaf", human.Quote(f))
			default:
				return e.usageError("unknown field %s in --fields; the fields are %s", human.Quote(f), strings.Join(known, ", "))
			}
		}
		if len(o.Fields) == 0 {
			return e.usageError("--fields names no field; the fields are %s", strings.Join(known, ", "))
		}
	}
	path, err := resolveSession(*store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	// The listing fields describe the file as it is on disk, before any
	// in-memory migration, as pi's list() sees it.
	info, infoErr := fileStore(path, engine.StoreOptions{}).Info(e.ctx, path)
	s, err := openReadOnly(e.ctx, path)
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	if infoErr == nil {
		o.Info, o.NoInfo = info, false
	}
	if err := render.State(e.stdout, s, o); err != nil {
		return e.fail(err)
	}
	return exitOK
}
