package search

import (
	"fmt"
	"path/filepath"

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
