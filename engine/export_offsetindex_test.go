package engine

import "context"

// OffsetIndexUse is how an open used the offset index, for tests.
type OffsetIndexUse = indexUse

// The values of OffsetIndexUse.
const (
	OffsetIndexUnused = indexUnused
	OffsetIndexExact  = indexExact
	OffsetIndexPrefix = indexPrefix
)

// WithOffsetIndexTest returns o with the offset index kept for files of
// min bytes and more, and hook told how each open used it.
func WithOffsetIndexTest(o StoreOptions, min int64, hook func(OffsetIndexUse)) StoreOptions {
	o.testIndexMin = min
	o.testIndexHook = hook
	return o
}

// WithoutLock returns o without the writer lock, for tests on a
// filesystem the lock package cannot reach (vfstest's).
func WithoutLock(o StoreOptions) StoreOptions {
	o.noLock = true
	return o
}

// OffsetIndexPath and ListIndexPath are where the offset index of a
// session file and the list index of a session directory are kept.
var (
	OffsetIndexPath = offsetIndexPath
	ListIndexPath   = listIndexPath
)

// ReadContextIn is ReadContext with the store's options (its filesystem,
// cache directory and test hooks).
func ReadContextIn(ctx context.Context, st *Store, path, leaf string) (*FileContext, error) {
	return readContext(ctx, path, leaf, st.openOptions(OpenOptions{ReadOnly: true}))
}
