// Package sessionfile knows the files that belong to one pi/indusagi
// session file on disk, for package engine and the packages that write or
// judge session files beside it (engine/importer, engine/repair,
// engine/render, replica, the CLI): the writer lock and its owner record
// (LockPath, Acquire), migration backups, quarantined torn tails and the
// temporary files of interrupted writes (IsSidecar, IsTemp, TempFiles),
// the trash a deleted session goes to (TrashDir), which paths nothing but
// a session's writer may write (CheckOutput), and the replacement of a
// whole session file under its lock (WriteWhole).
package sessionfile
