package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
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
func storeRoot(store string) (string, error) {
	switch store {
	case "", "pi":
		dir, err := layout.AgentDir(layout.AgentPi)
		return layout.SessionsDir(dir), err
	case "indusagi":
		dir, err := layout.AgentDir(layout.AgentIndusagi)
		return layout.SessionsDir(dir), err
	case "agentuse":
		return "", errors.New("--store agentuse holds AgentUse sessions, not JSONL session files")
	}
	return store, nil
}

// resolveSession turns a path, an id or a unique id prefix into the path of
// a JSONL session file.
func resolveSession(store, arg string) (string, error) {
	if arg == "" {
		return "", errEmptySession
	}
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		return engine.ResolveSession("", arg) // a path: no store needed
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return arg, nil
	}
	root, err := storeRoot(store)
	if err != nil {
		return "", err
	}
	return engine.ResolveSession(root, arg)
}
