package replica

import (
	"context"
	"slices"
)

// ScanLocal is the walk of the local store a run starts with: the files
// and directories of the sessions it would sync, sorted, and what it
// skipped.
func ScanLocal(ctx context.Context, r *Remote) (paths []string, skipped []Warning, err error) {
	locals, _, skipped, err := r.scanLocal(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range locals {
		paths = append(paths, l.path)
	}
	slices.Sort(paths)
	return paths, skipped, nil
}
