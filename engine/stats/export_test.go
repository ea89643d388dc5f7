package stats

// SetWindow makes Dir go through n files at a time, until the function
// it returns is called, so that tests can cross windows with few files.
func SetWindow(n int) (restore func()) {
	old := window
	window = n
	return func() { window = old }
}
