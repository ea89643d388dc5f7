package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/sessctl/sessctl/layout"
)

// SessionFilesIn expands paths as 'sessctl migrate' does: a file as it
// is, a directory recursively to its *.jsonl files in lexical order
// (symbolic links are not followed, unreadable parts are skipped; named
// pipes and other special files are kept, so that MigrateFile reports them
// as not regular files). A path that does not exist fails with
// ErrNotFound.
func SessionFilesIn(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
			}
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable parts are skipped
			}
			if !d.IsDir() && layout.IsSessionFileName(d.Name()) && d.Type()&fs.ModeSymlink == 0 {
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
