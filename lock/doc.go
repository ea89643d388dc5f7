// Package lock gives a session one writer at a time.
//
// A writer calls [Acquire] on the session's lock file (for a pi session,
// "<session file>.lock"; for an AgentUse session, a lock file inside its
// directory) and keeps the returned [*Lock] for as long as it writes, then
// calls [Lock.Close]. A second writer, in another process or in the same
// one, fails at once with a [*LockedError] that matches [ErrLocked] and
// names the holder, or waits when [Options.Wait] is set.
//
// # Files
//
// For a lock path "x.jsonl.lock" the package uses:
//
//	x.jsonl.lock        the lock file, locked with flock(2) through
//	                    github.com/gofrs/flock; created 0600, never
//	                    renamed, never removed on release
//	x.jsonl.owner       the owner record (see [OwnerPath]): one JSON object
//	                    naming pid, process start time, boot id, host,
//	                    user, command, mode and since; replaced atomically
//	                    after the lock is taken, removed on Close if it is
//	                    still ours
//	x.jsonl.lock.excl   the fallback lock file, only in fallback mode; it
//	                    holds the owner record itself (no ".owner" file)
//
// The kernel lock is the only truth. The owner record merely explains it:
// when [Acquire] finds the lock held, it reads the record and classifies it.
// A record naming a live process on this host and boot (same pid, same start
// time) describes the holder; one naming this process gives
// [LockedError.Self]; one whose pid is gone, or was reused by a process with
// another start time, is reported as stale (the kernel lock is then held by
// some process that did not write a record, typically a child that inherited
// the descriptor). A record from another host is never called stale. Since a
// holder's kernel lock dies with its process, a crashed writer never blocks
// the next one; its record is only history.
//
// After taking the lock, Acquire checks that the locked descriptor still is
// the file at the path (same device and inode, at least one link). If the
// file was removed or replaced in between, the lock protects nothing, so it
// is released and taken again, a bounded number of times. For the same
// reason lock files are never deleted on release; a tool that wants to
// garbage-collect them must take the lock first and remove the file while
// holding it.
//
// Lock, owner and fallback files are opened without following symbolic
// links: a symbolic link planted at the lock path, the owner path or the
// fallback path is refused with an error naming it, and its target is
// neither created nor written. Files are created 0600 and a missing parent
// directory 0700. Descriptors are close-on-exec, so child processes do not
// inherit the lock.
//
// # Fallback
//
// Some file systems cannot lock at all: flock(2) fails with ENOLCK or
// EOPNOTSUPP (some FUSE and SMB mounts). Acquire then, or always when
// [Options.NoFlock] is set, falls back to an exclusive-create lock: it
// creates "<lock path>.excl" with O_CREATE|O_EXCL|O_NOFOLLOW (mode 0600) and
// writes the owner record into it. Whoever creates the file holds the lock;
// [Lock.Close] removes it again, but only while it still holds this Lock's
// record. The two modes exclude each other, so a process forced into the
// fallback and one using flock(2) never both hold a session: after creating
// the file, a fallback acquirer probes the kernel lock and backs off if it
// is held, and a flock acquirer, after taking the kernel lock, backs off if
// a ".excl" file exists that is not stale.
//
// A process that dies leaves its ".excl" file behind. The file counts as
// stale, and is taken over, only when its record was written on the same
// host AND under the same boot id AND its pid is gone or now belongs to a
// process with another start time. The takeover guards against a competitor doing the same: the stale file
// is renamed to a unique "<lock path>.excl.stale-<pid>-<random>" name,
// re-read to confirm it still is the record that was judged stale, removed,
// and the O_EXCL create is tried again. A record from another host, or from
// another boot id (an earlier boot, or another machine with the same host
// name), is never taken over: the error names it, and a person who has
// checked that no process holds it must remove the file. The same holds for
// an empty or garbled ".excl" file, which is what a holder that crashed
// between creating the file and writing its record leaves behind. Such a
// file keeps flock-mode writers out as well.
//
// # Caveats
//
// NFS and other network file systems are not supported: flock(2) on NFS is
// emulated with byte-range locks that need a working lock manager, and the
// fallback's pid checks only make sense on one host. Keep sessions on a
// local file system.
//
// Kernel locks are advisory. Only processes that use this package (or take
// flock(2) on the same lock file) are kept out; readers take no lock.
//
// flock(2) locks belong to the open file description: two Acquire calls in
// one process conflict (reported with Self set), and a child process that
// inherits the descriptor keeps the lock after the parent dies. Do not pass
// the lock file to exec.Cmd.ExtraFiles.
//
// [Inspect] probes the kernel lock with a non-blocking TryLock and releases
// it at once. During that moment an Acquire without Wait fails with
// ErrLocked, typically with no owner record to name.
//
// There is a short window after a writer takes the lock and before it has
// written its owner record, in which a second writer finds no record or the
// previous holder's stale record.
//
// The fallback is weaker than flock(2). Taking over a stale ".excl" file
// is safe against one competitor, but if three or more processes meet the
// same stale file at the same instant, a narrow window remains in which two
// of them may both believe they hold it; the loser notices on Close, which
// then reports that the file no longer holds its record.
//
// Process start times and boot ids are read from /proc on Linux only.
// Elsewhere liveness rests on kill(pid, 0) alone, which a reused pid can
// fool, and on Windows symbolic links at the lock path are detected after
// the open rather than prevented by it.
package lock
