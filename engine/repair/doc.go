// Package repair checks pi session files for damage and salvages damaged
// ones into new, valid files. It is what 'sessctl verify' and 'sessctl
// repair' run, for an agent that got engine.ErrCorrupt from engine.OpenFile:
//
//	func salvage(ctx context.Context, path string) (*engine.Session, error) {
//		s, err := engine.OpenFile(ctx, path, engine.OpenOptions{})
//		if !errors.Is(err, engine.ErrCorrupt) {
//			return s, err
//		}
//		res, err := repair.File(path, repair.Options{}) // the original is kept
//		if err != nil {
//			return nil, err
//		}
//		if res.Output == nil {
//			return nil, fmt.Errorf("open %s: nothing to repair", path)
//		}
//		return engine.OpenFile(ctx, *res.Output, engine.OpenOptions{})
//	}
//
// Verify and VerifyFile report, with line numbers, everything that makes
// a file differ from what pi writes, as Findings of these kinds.
//
// Problems (Report.OK is false when there is one): empty, no-header,
// bad-header (the header's id is not a string), version (above 3, or not a
// number), extra-header, malformed, not-object, torn-tail (an unfinished
// last line), no-final-newline, bad-id, duplicate-id, bad-parent,
// missing-parent, self-parent, cycle.
//
// Notes (the file passes): legacy-version, crlf, trailing-space,
// unknown-type, no-cwd, label-target, bad-timestamp, temp-file (left
// beside the session by an interrupted sessctl write; VerifyFile and
// NoteTempFiles look for them).
//
// Repair and File salvage a file, in this order: lines that are not JSON
// objects are dropped, except for the entries found whole inside them
// (split-line), a torn last line is cut off (cut-torn-tail) and a missing
// final newline added (added-newline); the first "session" line with a
// string id becomes the header, moved to the top (moved-header), other
// headers are dropped (dropped-header), and a header is made when there is
// none (added-header); a version 1 or 2 file is migrated (migrated); an
// entry without a string id gets one (added-id), a later exact copy of a
// line is dropped (dropped-duplicate) and any other reuse of an id gets a
// new one (renamed-duplicate), with references to shared ids pointed at
// the right copy (updated-reference); an entry whose parent is missing,
// not a string, itself or on a loop is re-parented (reparented): to the
// parent of a dropped line when that can still be read, else to the entry
// written just before it. New ids are 8 hex digits derived from the old
// id and line, so repairing the same file twice gives the same result.
// The result always passes Verify; the original is never modified.
package repair
