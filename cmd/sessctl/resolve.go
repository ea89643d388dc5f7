package main

import (
	"errors"
	"flag"

	"github.com/sessctl/sessctl/engine"
)

// Sessions are named like git objects: by path, by full id, or by a unique
// prefix of the id, looked up in a store.

// storeFlag adds --store to a command. The value is "pi" (default),
// "indusagi", "agentuse" or a directory searched recursively.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "pi", "where to look session ids up: `pi`, indusagi, agentuse or a directory")
}

// errAmbiguous is matched by the errors of a name that fits several
// sessions or entries; the CLI exits 2 for it.
var errAmbiguous = engine.ErrAmbiguous

// errEmptySession is returned for an empty SESSION argument: a usage
// mistake (exit 2), as the commands that check it before resolving say.
var errEmptySession = errors.New("SESSION is empty: give a file path, a session id or a unique id prefix")

// storeRoot returns the directory a JSONL store keeps its sessions in.
func storeRoot(store string) (string, error) { return engine.StoreDir(store) }

// resolveSession turns a path, an id or a unique id prefix into the path of
// a JSONL session file.
func resolveSession(store, arg string) (string, error) {
	if arg == "" {
		return "", errEmptySession
	}
	return engine.ResolveInStore(store, arg)
}
