// Command sessctl-bench writes the workloads of `make bench` and runs the
// sessctl side of its like-for-like rows against pi (the counterpart of
// scripts/pi-bench.mjs). It is a tool of this repository, not part of the
// sessctl a user installs.
//
// Usage:
//
//	sessctl-bench gen session [--seed N] [--entries N] [--v1] FILE
//	sessctl-bench gen dir [--seed N] [--sessions N] [--size BYTES] DIR
//	sessctl-bench resume FILE
//	sessctl-bench append N DIR
//	sessctl-bench append-sync N DIR
//	sessctl-bench recent CWD
//	sessctl-bench mkbucket BUCKET
//	sessctl-bench put BUCKET/KEY FILE
//	sessctl-bench get BUCKET/KEY
//
// "gen session" writes one seeded, realistic pi session file (prompts,
// assistant turns with thinking, text, tool calls and usage, tool results
// of 1-20 KB, an image every thousand entries, branches, labels, names and
// compactions; the same seed gives the same bytes); "gen dir" writes a
// store of such sessions with pi's file names. Neither writes over a file
// that belongs to a session.
//
// "resume" opens FILE for writing with the default options (lock, backup
// of a migrated file), flushes the deferred migration and closes it, and
// prints the entries. "append" creates a session in DIR and appends N typed
// messages (the messages of pi-bench.mjs) without an fsync and prints
// entries per second; "append-sync" does the same with an fsync per
// append. "recent" opens the most recent session of CWD in pi's store
// ($PI_CODING_AGENT_DIR) read-only, as an agent's "continue" does, and
// prints its file and the time of Store.ContinueRecent in process.
// "mkbucket" makes a bucket on the S3 server that the AWS_* variables
// name, as sessctl sync reads them. "put" copies FILE into one object of
// that server, "get" reads an object to nowhere, both streamed in parts
// of 16 MiB as sync's segments are, and print the speed: the object
// store's own, under sessctl sync push and pull.
package main
