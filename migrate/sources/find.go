package sources

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/sessctl/sessctl/migrate"
)

// Found is a store of a source found on this machine: the source and
// where the store is.
type Found struct {
	Source migrate.Source
	Path   string
}

// Find returns the stores of srcs that exist where loc says each keeps
// them, in the order of srcs and of their Locations, and every location
// it looked in.
func Find(loc migrate.Locator, srcs ...migrate.Source) (found []Found, looked []string) {
	for _, src := range srcs {
		for _, p := range src.Locations(loc) {
			looked = append(looked, p)
			if src.Detect(p) {
				found = append(found, Found{src, p})
			}
		}
	}
	return found, looked
}

// Stores returns the stores of src to import from: the one at path, or
// with path "" those Find finds, failing with an error that says where it
// looked and matches fs.ErrNotExist when there is none.
func Stores(loc migrate.Locator, src migrate.Source, path string) ([]Found, error) {
	if path != "" {
		return []Found{{src, path}}, nil
	}
	found, looked := Find(loc, src)
	if len(found) == 0 {
		return nil, fmt.Errorf("no %s store found (looked in %s): %w", src.Title(), strings.Join(looked, ", "), fs.ErrNotExist)
	}
	return found, nil
}
