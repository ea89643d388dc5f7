// Package vfs is the filesystem seam: every file sessctl writes, and every
// session file it reads, goes through an FS, so that tests can run the
// engine on a filesystem that crashes or fails (package vfstest) instead
// of the operating system's (OS).
//
// It is public because engine.Options.FS, agentuse.Options.FS and
// migrate's file functions take an FS: a program that embeds sessctl can
// pass its own implementation, or wrap OS to observe or fail operations,
// without importing anything internal. It imports only the standard
// library.
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
// DirMode (0700): sessions hold secrets.
//
// # Reading
//
// On the real filesystem only regular files are opened for reading, and
// the open never waits (OpenRegular, ReadRegular): a named pipe, socket or
// device named like a session file is refused with ErrNotRegular instead
// of blocking forever. ReadFile reads a large file in parallel chunks.
//
// Sync policies (when to fsync an append) belong to the stores that use
// the seam, engine and engine/agentuse; this package only offers the
// durable and the non-durable replace.
package vfs
