// Package vfstest holds filesystems for tests, kept apart from package vfs
// in the way pebble keeps vfs/errorfs apart from vfs: production code never
// imports it.
//
// CrashFS is an in-memory vfs.FS that keeps synced and unsynced data apart
// and simulates power cuts (CrashClone keeps what fsync made durable and a
// random part of the rest, torn writes included), so a test can check that
// every acknowledged write survives. FaultFS wraps any vfs.FS and fails the
// Nth operation of a kind (Inject, with DiskFull for ENOSPC and a partial
// write), or whatever a hook decides (SetHook). Dump reads a whole tree
// through a vfs.FS, to compare filesystems with one diff.
//
// It is public so that a program embedding sessctl can run its own crash
// and fault tests against the engine through engine.StoreOptions.FS.
package vfstest
