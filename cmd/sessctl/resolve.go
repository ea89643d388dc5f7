package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Sessions are named like git objects: by path, by full id, or by a unique
// prefix of the id, looked up in a store.

// storeFlag adds --store to a command. The value is "pi" (default),
// "indusagi", "agentuse" or a directory searched recursively.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "pi", "where to look session ids up: `pi`, indusagi, agentuse or a directory")
}

// errAmbiguous is matched by ambiguousError; the CLI exits 2 for it.
var errAmbiguous = errors.New("ambiguous session id")

// errEmptySession is returned for an empty SESSION argument: a usage
// mistake (exit 2), as the commands that check it before resolving say.
var errEmptySession = errors.New("SESSION is empty: give a file path, a session id or a unique id prefix")

// ambiguousError lists the sessions a prefix matches.
type ambiguousError struct {
	prefix     string
	candidates []candidate
}

func (e *ambiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions:", e.prefix, len(e.candidates))
	for i, c := range e.candidates {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.candidates)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s  %s", c.id, c.path)
	}
	return b.String()
}

func (e *ambiguousError) Unwrap() error { return errAmbiguous }

type candidate struct {
	id   string
	path string
}

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
	// A name that looks like a path is a path: only its real absence is
	// "not found". A directory, a symbolic link loop or a directory that
	// may not be searched each say what they are.
	pathLike := strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl")
	st, err := os.Stat(arg)
	switch {
	case err == nil && !st.IsDir():
		return arg, nil
	case !pathLike:
		// Not a file here: an id or an id prefix.
	case err == nil:
		return "", fmt.Errorf("session file %s: %w", arg, syscall.EISDIR)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("session file %s: %w", arg, engine.ErrNotFound)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("session file %s: %w", arg, err)
	}
	root, err := storeRoot(store)
	if err != nil {
		return "", err
	}
	cands, unreadable, err := storeCandidates(root)
	if err != nil {
		return "", err
	}
	var exact, prefix []candidate
	low := strings.ToLower(arg)
	for _, c := range cands {
		switch {
		case c.id == arg:
			exact = append(exact, c)
		case strings.HasPrefix(strings.ToLower(c.id), low):
			prefix = append(prefix, c)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0].path, nil
	case len(exact) > 1:
		return "", &ambiguousError{arg, exact}
	case len(prefix) == 1:
		return prefix[0].path, nil
	case len(prefix) > 1:
		return "", &ambiguousError{arg, prefix}
	}
	if len(unreadable) > 0 {
		// It may be in what could not be read: say so, not "not found".
		return "", fmt.Errorf("session %q in %s: not among the sessions that could be read (%s could not be read): %w",
			arg, root, plural(len(unreadable), "directory", "directories"), unreadable[0])
	}
	return "", fmt.Errorf("session %q in %s: %w", arg, root, engine.ErrNotFound)
}

// storeCandidates lists every *.jsonl file under root with its session
// id: from the file name when it has pi's "<ts>_<id>.jsonl" form,
// otherwise from its header line. Subdirectories that cannot be read are
// skipped and returned.
func storeCandidates(root string) (out []candidate, unreadable []error, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			unreadable = append(unreadable, err)
			return nil
		}
		if d.IsDir() && d.Name() == ".trash" {
			return filepath.SkipDir // sessions moved aside by 'sessctl delete'
		}
		if d.IsDir() || !layout.IsSessionFileName(d.Name()) {
			return nil
		}
		id := idFromName(d.Name())
		if id == "" {
			id = headerID(p)
		}
		if id != "" {
			out = append(out, candidate{id: id, path: p})
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("session store %s: %w", root, engine.ErrNotFound)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, unreadable, err
}

// idFromName returns the id part of "<ts>_<id>.jsonl", or "".
func idFromName(name string) string {
	base := strings.TrimSuffix(name, ".jsonl")
	i := strings.IndexByte(base, '_')
	if i != len("2026-03-01T09-00-00-123Z") {
		return ""
	}
	return base[i+1:]
}

// headerID reads the session id from the first line of a file.
func headerID(path string) string {
	f, err := vfs.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	buf = buf[:n]
	if i := strings.IndexByte(string(buf), '\n'); i >= 0 {
		buf = buf[:i]
	}
	e, err := jsonl.ParseEntry(buf)
	if err != nil || !e.IsHeader() || e.IDKind != jsonl.KindString {
		return ""
	}
	return e.ID
}
