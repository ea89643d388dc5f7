// Package replica replicates a sessctl store (pi/indusagi JSONL sessions
// and AgentUse session directories) to S3-compatible object storage (AWS
// S3, MinIO, R2, GCS's S3 API) or a directory, and merges what other
// machines appended back into it.
//
// Open a Remote with Options (the remote: s3://bucket/prefix, opened by
// package replica/s3's Backend, or a directory; the store's
// directories), then Push, Pull, Sync (pull, then push) or Status.
// Nothing leaves the machine unless a Remote is opened and asked to push,
// or a Replicator is set as engine.StoreOptions.Replicator.
//
// # Object storage
//
// A Remote reads and writes its objects through a Client: create-only
// and compare-and-swap writes, streamed reads, listings by prefix in key
// order, deletes. Package replica/s3 speaks to an S3-compatible bucket
// (single PUTs with Content-MD5; If-None-Match and If-Match conditions),
// in a package of its own so that replica links no S3 client;
// NewDirClient keeps the objects as files below a directory (each
// written whole and renamed into place; creates by hard link, swaps
// under a lock file). Options.Client takes any other implementation, or
// one wrapping these. Manifests and tombstones are created (create-only
// writes); leases are replaced by compare-and-swap.
//
// # Layout
//
// The remote holds immutable objects: content-addressed data objects (a
// JSONL session's segments; an AgentUse session's files) and one small
// manifest per session generation naming them with their SHA-256 (and
// carrying small segments itself). A push uploads only what was appended
// since the last push, and publishes the next generation with a
// conditional PUT, so two machines never overwrite each other; it
// compacts the session's small segments into larger ones, so that a pull
// reads a handful of objects. Transfers are streamed, a segment at a time
// (Options.SegmentSize), every read bounded by the size its listing or
// manifest states, and a push compares the local file with the remote
// copy by checksums before it downloads anything. A store of thousands of
// sessions is compared with one listing and a record of the last run kept
// in Options.StateDir. docs/spec/replication.md specifies the layout.
//
// # Deletion and collection
//
// Remote.Delete deletes sessions from the remote, leaving tombstones, so
// that no pull brings them back; Remote.Prune applies a retention and
// removes the objects no manifest names, after a grace period. Nothing
// else deletes anything from a remote. Remote.Sessions and
// Remote.ReadSession read a remote without a local store.
//
// # Merge
//
// A pull appends the entries the local file lacks under the session's
// writer lock in one write (engine.Session.AppendLines): parents before
// children, bytes unchanged, the header kept, nothing local rewritten.
// The local leaf stays the active one: when the last appended entry is on
// another branch, a label entry ("sessctl sync: remote tip") on it is
// appended below the local leaf; such markers are uploaded only when
// something descends from them. The same id with different bytes is a
// Conflict: both versions are kept under ids derived from their bytes,
// and reported. The merge is deterministic and idempotent. A restore or
// merge takes complete entry lines only; any other line of the remote
// copy is left out and listed in SessionReport.Refused.
//
// # Continuous replication
//
// A Replicator (an engine.Replicator) ships the complete lines appended
// to open sessions in the background, at most once per Interval per
// session (the request budget); appends never wait for the network, a
// server that is down is retried with backoff, and Close flushes with a
// timeout. With leases on it is an engine.Leaser too: one machine at a
// time writes a session (see Replicator.Lease).
package replica
