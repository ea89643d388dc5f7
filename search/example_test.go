package search_test

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
)

// searchHistory is the package documentation's example (and the
// README's): it prints the hits of a query in a directory of session
// files.
func searchHistory(ctx context.Context, sessionsDir string) error {
	x, err := search.Open(ctx, search.Options{})
	if err != nil {
		return err
	}
	defer x.Close()
	q := search.Query{Text: `"flaky migration"`, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: sessionsDir}}, Limit: 20}
	for hit, err := range x.Search(ctx, q) {
		if err != nil {
			return err
		}
		fmt.Println(hit.Time, hit.Session.Name, hit.Snippet, hit.Entry, hit.Session.Path)
	}
	return nil
}

// Example searches a store. It is compiled, not run: it would create the
// index in the user's cache directory.
func Example() {
	_ = searchHistory(context.Background(), "sessions")
}
