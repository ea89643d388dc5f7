package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/human"
)

var verifyCommand = newCommand("verify", "check session files for damage (exit 4 when anything is wrong)")

func init() { verifyCommand.run = runVerify }

func runVerify(e *env, args []string) int {
	fs := e.flags(verifyCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	if code := e.parse(verifyCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return e.usageError("expected at least one SESSION or directory")
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	code := exitOK
	worse := func(c int) {
		// Damage found outranks a name that could not be resolved.
		if code != exitCorrupt && c != exitOK {
			code = c
		}
	}
	check := func(path string) {
		rep, err := repair.VerifyFile(nil, path)
		if err != nil {
			w.Flush()
			worse(e.fail(err))
			return
		}
		if !rep.OK {
			code = exitCorrupt
		}
		if *asJSON {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(rep)
		} else {
			rep.WriteText(w)
		}
	}
	for _, arg := range fs.Args() {
		if err := e.ctx.Err(); err != nil {
			w.Flush()
			return e.fail(err)
		}
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			files, skipped, err := engine.FilesBelow(e.ctx, engine.StoreOptions{}, arg)
			if err != nil {
				w.Flush()
				worse(e.fail(err))
				continue
			}
			// What could not be read was not verified: not ok (exit 1,
			// unless damage was found).
			for _, err := range skipped {
				w.Flush()
				fmt.Fprintf(e.stderr, "sessctl: verify: skipped %v\n", err)
				worse(exitFailure)
			}
			if len(files) == 0 && len(skipped) == 0 {
				fmt.Fprintf(e.stderr, "sessctl: verify: no *.jsonl files under %s\n", human.QuotePath(arg))
			}
			for _, f := range files {
				check(f)
			}
			// What writers left beside sessions that never came to be
			// passes (it is no damage), but is said.
			left, err := repair.Leftovers(e.ctx, arg)
			if err != nil {
				w.Flush()
				worse(e.fail(err))
			}
			for _, l := range left {
				if *asJSON {
					emitJSON(w, l)
				} else {
					fmt.Fprintln(w, l.Text(fmt.Sprintf("'sessctl repair %s' removes it", human.ShellQuote(arg))))
				}
			}
			continue
		}
		path, err := resolveSession(*store, arg)
		if err != nil {
			w.Flush()
			worse(e.fail(err))
			continue
		}
		check(path)
	}
	return code
}
