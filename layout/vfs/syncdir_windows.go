package vfs

// syncDir does nothing: Windows has no directory fsync. A rename
// (MoveFileEx) and a create are metadata operations that NTFS records in
// its journal, and FlushFileBuffers of the files themselves (os.File.Sync)
// is what makes their data durable. FlushFileBuffers on a directory
// handle fails with access denied unless the directory was opened for
// writing, which os.Open does not do.
func syncDir(string) error { return nil }
