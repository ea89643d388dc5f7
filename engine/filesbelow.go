package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// FilesBelow returns the session files paths name, for an operation over
// many files (migrating, verifying): a path that is not a directory as it
// is (whatever its type: the operation says what is wrong with it), a
// directory as its session files, in the order Store.Files walks a store
// with Dir set to it (and o's other options), and what those walks left
// out as the errors Files yields for it. A path that does not exist fails
// with ErrNotFound; a directory that cannot be walked ends it with that
// error.
func FilesBelow(ctx context.Context, o StoreOptions, paths ...string) (files []string, skipped []error, err error) {
	for _, p := range paths {
		st, err := orOS(o.FS).Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("%s: %w", p, ErrNotFound)
			}
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		so := o
		so.Dir = p
		store, err := OpenStore(ctx, so)
		if err != nil {
			return nil, nil, err
		}
		for f, err := range store.Files(ctx) {
			switch {
			case err == nil:
				files = append(files, f.Path)
			case f.Path == "":
				return nil, nil, err
			default:
				skipped = append(skipped, err)
			}
		}
	}
	return files, skipped, nil
}
