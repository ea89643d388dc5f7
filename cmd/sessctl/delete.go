package main

import (
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var deleteCommand = newCommand("delete", "move a session to the store's trash")

func init() { deleteCommand.run = runDelete }

func runDelete(e *env, args []string) int {
	fs := e.flags(deleteCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(deleteCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if len(pos) != 1 {
		return e.usageError("expected one SESSION")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return e.fail(err)
	}
	so := engine.StoreOptions{Command: "sessctl delete"}
	st, err := jsonlStore(*store, so)
	if err != nil {
		st = fileStore(path, so) // no store: trash beside the file
	}
	ctx, cancel := waitContext(e.ctx, *wait)
	defer cancel()
	moved, err := st.Trash(ctx, path, engine.TrashOptions{Wait: *wait > 0})
	if err != nil {
		return e.fail(err)
	}
	trash := filepath.Dir(moved[0].To)
	if *asJSON {
		list := []byte{'['}
		for i, m := range moved {
			if i > 0 {
				list = append(list, ',')
			}
			list = append(list, jsonl.NewObject(128).String("from", m.From).String("to", m.To).Bytes()...)
		}
		jsonOut(e.stdout, jsonl.NewObject(256).String("session", path).String("trash", trash).
			Raw("moved", append(list, ']')).Bytes())
		return exitOK
	}
	fmt.Fprintf(e.stdout, "moved %s to %s", human.QuotePath(filepath.Base(path)), human.QuotePath(trash))
	if n := len(moved) - 1; n > 0 {
		fmt.Fprintf(e.stdout, " (with %s)", human.Plural(n, "backup file", "backup files"))
	}
	fmt.Fprintln(e.stdout)
	return exitOK
}
