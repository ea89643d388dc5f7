// Package compaction turns a session path into the model context and makes
// compaction decisions, following pi 0.58.3.
//
// Build is pi's buildSessionContext: the latest compaction's summary first,
// then the kept range from its firstKeptEntryId, then everything after it;
// branch summaries and custom messages become messages of their own; the
// model and thinking level are those last set on the path. Stored message
// objects are returned as the bytes that were read, never re-encoded.
package compaction
