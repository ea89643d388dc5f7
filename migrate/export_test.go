package migrate

// SplitInMemory makes InMemory cut every input of at least threshold
// bytes into parts ranges until the returned function is called.
func SplitInMemory(threshold, parts int) (restore func()) {
	t, p := memoryThreshold, memoryParts
	memoryThreshold, memoryParts = threshold, func() int { return parts }
	return func() { memoryThreshold, memoryParts = t, p }
}

// SpillAt makes Builders move entry content to their temporary file past
// n bytes until the returned function is called.
func SpillAt(n int64) (restore func()) {
	old := spillAt
	spillAt = n
	return func() { spillAt = old }
}
