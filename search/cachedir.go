package search

import (
	"fmt"
	"os"
	"path/filepath"
)

// defaultDir is where the index lives when Options.Dir is empty:
// <user cache dir>/sessctl/search. os.UserCacheDir honours
// $XDG_CACHE_HOME on Unix. (Package layout is to get a shared cache
// directory resolver; this is the one place to switch over to it.)
func defaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the search index directory: %w", err)
	}
	return filepath.Join(dir, "sessctl", "search"), nil
}
