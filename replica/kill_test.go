package replica_test

// syncer is the child the kill tests start: it runs one sync.
func syncer() int { return 0 }
