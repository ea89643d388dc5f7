// Package vfs is the filesystem seam: every file operation of sessctl's
// libraries (reads, writes, stats, directory listings and walks) goes
// through an FS, so that tests can run them on a filesystem that crashes
// or fails (package vfstest) instead of the operating system's (OS).
// What the seam cannot carry is said where it happens: SQLite (the search
// index, importers' databases) opens its files by path, kernel locks are
// taken on the real file, and the kernel's /proc is read through OS; those
// callers need the real filesystem or a wrapper of it (FaultFS).
//
// It is public because the libraries' options take an FS
// (engine.StoreOptions.FS, agentuse.StoreOptions.FS, search.Options.FS,
// web.Options.FS, lock.Options.FS, migrate's file and import options, and
// the others), and the functions without options an fsys argument: a
// program that embeds sessctl can pass its own implementation, or wrap OS
// to observe or fail operations, without importing anything internal. It imports only the standard
// library and, on macOS, golang.org/x/sys/unix (F_FULLFSYNC).
//
// # Durable writes
//
// Whole files are replaced atomically and durably (WriteFileAtomic: a
// temporary file named by TempName in the same directory, created
// exclusively and never through a symbolic link, fsync, rename, fsync of
// the directory; new directories are made durable too, MkdirAllSync).
// WriteFileAtomicNoSync does the same without any fsync, for stores run
// without durability. A file that is replaced keeps its mode, owner and
// group (KeepAttrs); one without any write permission bit, one the caller
// could not write, a symbolic link or a special file is refused before
// anything is written (CheckReplace: ErrReadOnly, ErrSymlink,
// ErrNotRegular). Files are created FileMode (0600) and directories
// DirMode (0700): sessions hold secrets. Run as root, new files and
// directories get the owner and group of the directory they are made in,
// or of the session they belong to (OwnLike, ChownLike), so that a command
// run with sudo leaves nothing the session's owner cannot open.
//
// # Reading
//
// On the real filesystem only regular files are opened for reading, and
// the open never waits (OpenRegular, ReadRegular): a named pipe, socket or
// device named like a session file is refused with ErrNotRegular instead
// of blocking forever. ReadFile reads a large file in parallel chunks.
// WalkDir, Glob and MkdirTemp are filepath.WalkDir, filepath.Glob and
// os.MkdirTemp through an FS, so that walks of stores (and of other
// agents' stores, for importers) reach a test's FS too.
//
// # Platforms
//
// On Windows every file is opened with delete sharing
// (FILE_SHARE_READ|FILE_SHARE_WRITE|FILE_SHARE_DELETE, as Node and so pi
// and AgentUse do), so a rewrite can rename over a file that sessctl or
// pi holds open; when another program holds it open without delete
// sharing, the rename fails with ErrInUse and nothing is lost (the
// original is untouched and the temporary file removed). Renames are
// MoveFileEx with MOVEFILE_REPLACE_EXISTING (os.Rename), file syncs
// FlushFileBuffers (os.File.Sync), and SyncDir does nothing: Windows has
// no directory fsync. Modes mean nothing there beyond the read-only
// attribute (a file created without a write bit); the files are protected
// by the ACLs of the user's profile directory they live in. On macOS file
// syncs are F_FULLFSYNC (os.File.Sync does that) and so is SyncDir,
// falling back to fsync where a filesystem does not support it.
//
// Sync policies (when to fsync an append) belong to the stores that use
// the seam, engine and engine/agentuse; this package only offers the
// durable and the non-durable replace.
package vfs
