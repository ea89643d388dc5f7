package search

import "github.com/sessctl/sessctl/layout"

// dirPlaces returns the places of a directory, as --store DIR names
// them: both formats below it.
func dirPlaces(dir string) []layout.Place {
	ps, err := layout.ResolvePlaces(dir)
	if err != nil {
		panic("search test: places of " + dir + ": " + err.Error())
	}
	return ps
}
