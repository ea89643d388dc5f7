package search

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sessctl/sessctl/layout"
)

// defaultDir is where the index lives when Options.Dir is empty:
// <sessctl's cache directory>/search (layout.CacheDir: $XDG_CACHE_HOME
// when set, the system's user cache directory otherwise).
func defaultDir() (string, error) {
	dir, err := layout.CacheDir()
	if err != nil {
		return "", fmt.Errorf("find the search index directory: %w", err)
	}
	return filepath.Join(dir, "search"), nil
}

// dirError is an index directory inside a store; it matches
// fs.ErrInvalid.
type dirError struct{ msg string }

func (e *dirError) Error() string        { return e.msg }
func (e *dirError) Is(target error) bool { return target == fs.ErrInvalid }

// checkIndexDir refuses an index directory that is, or is inside, an
// agent's store (the directory above each of this machine's places:
// pi's and indusagi's agent directories, AgentUse's <data>/agentuse) or
// one of stores: the index is never written into a store. Symbolic links
// are resolved on both sides.
func checkIndexDir(dir string, stores []layout.Place) error {
	type place struct{ root, what string }
	var places []place
	if ms, err := layout.MachinePlaces(); err == nil {
		for _, m := range ms {
			what := m.Name + "'s store"
			if m.Format == layout.FormatAgentUse {
				what = "AgentUse's store"
			}
			places = append(places, place{filepath.Dir(m.Root), what})
		}
	}
	for _, st := range stores {
		places = append(places, place{st.Root, "the searched store"})
	}
	real := realPath(dir)
	for _, p := range places {
		if root := realPath(p.root); within(real, root) {
			return &dirError{fmt.Sprintf("search index directory %s is inside %s %s: the index is never kept in a session store", dir, p.what, p.root)}
		}
	}
	return nil
}

// realPath returns p absolute with the symbolic links of its longest
// existing part resolved.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path is root or below it; file names compare
// without case where file systems usually ignore it.
func within(path, root string) bool {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		path, root = strings.ToLower(path), strings.ToLower(root)
	}
	return isUnder(path, root)
}
