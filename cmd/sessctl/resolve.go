package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
)

// Sessions are named like git objects: by path, by full id, or by a unique
// prefix of the id, looked up in a store.

// storeFlag adds --store to a command. The value is a store name or a
// directory, as layout.ResolvePlaces reads it: "pi" (default),
// "indusagi", "agentuse", "all" or a directory (the sessions of both
// formats below it).
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "pi", "where to look session ids up: `pi`, indusagi, agentuse or a directory")
}

// storePlaces resolves a --store value into places (layout.ResolvePlaces,
// the one parser of store names): an unknown name is a usage error; a
// directory must exist (a missing one is not found).
func storePlaces(store string) ([]layout.Place, error) {
	ps, err := layout.ResolvePlaces(store)
	if err != nil {
		return nil, err
	}
	if !layout.IsPlaceName(store) {
		if err := mustBeDir("session store", store); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// errAmbiguous is matched by the errors of a name that fits several
// sessions or entries; the CLI exits 2 for it.
var errAmbiguous = engine.ErrAmbiguous

// errEmptySession is returned for an empty SESSION argument: a usage
// mistake (exit 2), as the commands that check it before resolving say.
var errEmptySession = errors.New("SESSION is empty: give a file path, a session id or a unique id prefix")

// jsonlStore opens the JSONL store --store names: pi's or indusagi's,
// where the environment puts them, or a directory's session files. A
// name that holds no JSONL sessions ("agentuse"), or several stores of
// them ("all"), is refused: a session is looked up in one store. o gives
// the store's other options.
func jsonlStore(store string, o engine.StoreOptions) (*engine.Store, error) {
	ps, err := layout.ResolvePlaces(store)
	if err != nil {
		return nil, err
	}
	js := layout.Places(ps, layout.FormatJSONL)
	switch {
	case len(js) == 0:
		return nil, fmt.Errorf("--store %s holds AgentUse sessions, not JSONL session files", store)
	case len(js) > 1:
		return nil, fmt.Errorf("--store %s names %d stores of session files: name one (pi, indusagi or a directory)", store, len(js))
	}
	return engine.OpenPlace(context.Background(), js[0], o)
}

// fileStore returns a store on the directory of the session file at
// path, to open it with o's options.
func fileStore(path string, o engine.StoreOptions) *engine.Store {
	o.Dir = filepath.Dir(path)
	st, err := engine.OpenStore(context.Background(), o)
	if err != nil {
		panic("sessctl: a store on a directory: " + err.Error()) // OpenStore fails only resolving an agent's directory
	}
	return st
}

// storeRoot returns the directory a JSONL store keeps its sessions in.
func storeRoot(store string) (string, error) {
	st, err := jsonlStore(store, engine.StoreOptions{})
	if err != nil {
		return "", err
	}
	return st.Dir(), nil
}

// resolveSession turns a path, an id or a unique id prefix into the path of
// a JSONL session file (engine.Store.Resolve). A path needs no store: it
// resolves whatever --store says.
func resolveSession(store, arg string) (string, error) {
	if arg == "" {
		return "", errEmptySession
	}
	st, err := jsonlStore(store, engine.StoreOptions{})
	if err != nil {
		if !isPathArg(arg) {
			return "", err
		}
		st = fileStore(arg, engine.StoreOptions{})
	}
	return st.Resolve(context.Background(), arg)
}

// isPathArg reports whether a SESSION argument is a path rather than an
// id: it has a path separator or the .jsonl suffix, or names a file.
func isPathArg(arg string) bool {
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		return true
	}
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}

// sessionArg checks that args are one SESSION, not empty, and resolves
// it in store. It returns the session file, or the exit code to return
// (-1 to go on).
func (e *env) sessionArg(store string, args []string) (string, int) {
	if code := e.oneSession(args); code >= 0 {
		return "", code
	}
	path, err := resolveSession(store, args[0])
	if err != nil {
		return "", e.fail(err)
	}
	return path, -1
}

// oneSession checks that args are one SESSION, not empty; it returns -1
// to go on, or the exit code to return.
func (e *env) oneSession(args []string) int {
	if len(args) != 1 {
		return e.usageError("expected one SESSION")
	}
	return e.emptySession(args[0])
}

// cwdArg makes a --cwd value absolute. A working directory in the Unix
// form ("/home/dev/app") is kept as written on every system: it names
// sessions made on a Unix machine (imported or synced), which record it
// so, and on Windows making it absolute would prefix a drive.
func cwdArg(dir string) (string, error) {
	if strings.HasPrefix(dir, "/") {
		return path.Clean(dir), nil
	}
	return filepath.Abs(dir)
}
