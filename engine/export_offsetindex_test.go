package engine

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
func WithOffsetIndexTest(o Options, min int64, hook func(OffsetIndexUse)) Options {
	o.testIndexMin = min
	o.testIndexHook = hook
	return o
}
