// Package replica replicates a sessctl store (pi/indusagi JSONL sessions
// and AgentUse session directories) to S3-compatible object storage (AWS
// S3, MinIO, R2, GCS's S3 API) or a directory, and merges what other
// machines appended back into it.
//
// Open a Remote with Options (the remote: s3://bucket/prefix, with the
// endpoint and credentials from EnvS3Config, or a directory; the store's
// directories), then Push, Pull, Sync (pull, then push) or Status.
// Nothing leaves the machine unless a Remote is opened and asked to push,
// or a Replicator is set as engine.StoreOptions.Replicator.
//
// # Object storage
//
// A Remote reads and writes its objects through a Client: create-only
// and compare-and-swap writes, streamed reads, listings by prefix in key
// order, deletes. NewS3Client speaks to an S3-compatible bucket (single
// PUTs with Content-MD5; If-None-Match and If-Match conditions);
// NewDirClient keeps the objects as files below a directory (each
// written whole and renamed into place; creates by hard link, swaps
// under a lock file). Options.Client takes any other implementation, or
// one wrapping these. The layout needs creates only; compare-and-swap is
// there for what replaces an object in place.
//
// # Layout
//
// The remote holds immutable objects only: content-addressed data
// objects (a JSONL session's segments, each the lines one push appended;
// an AgentUse session's files) and one small manifest per session
// generation naming them with their SHA-256. A push uploads only what was
// appended since the last push, and publishes the next generation with a
// conditional PUT, so two machines never overwrite each other. A store of
// thousands of sessions is compared with one listing and a record of the
// last run kept in Options.StateDir. docs/spec/replication.md specifies
// the layout.
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
// to open sessions in the background, a segment per burst; appends never
// wait for the network, a server that is down is retried with backoff,
// and Close flushes with a timeout.
package replica
