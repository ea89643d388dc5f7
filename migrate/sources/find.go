package sources

import "github.com/sessctl/sessctl/migrate"

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
