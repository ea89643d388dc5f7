// Package jsonl is sessctl's JSON codec: the envelope scanner that indexes
// session files, the encoder that writes JSON as JavaScript's
// JSON.stringify writes it, and the JavaScript-compatible string, number
// and date handling both need. It knows the JSONL session format (entries,
// headers, version 3) but not where files live (package layout) nor how
// they are written (package layout/vfs).
//
// It is internal: its API is shaped by the engine's hot paths (spans into
// the line, trusted fast paths, unsafe string aliasing), not for callers.
// The types a library user sees (Entry, Header, Kind, CurrentVersion) are
// re-exported by package engine as aliases.
//
// # The JSONL format (version 3)
//
//	{"type":"session","version":3,"id":…,"timestamp":…,"cwd":…}      line 1: the header
//	{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":…,"message":{…}}
//	{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4",…}         one entry per line
//	…                                                                  the leaf is the last line
//
// Every entry has type, id, parentId (null for a root) and timestamp; the
// rest depends on the type (message, thinking_level_change, model_change,
// compaction, branch_summary, custom, custom_message, label, session_info;
// unknown types are kept). Lines end with '\n'. Readers take a line as an
// entry when it is one JSON object; blank lines are skipped and lines that
// do not parse are reported (BadLine) but never fatal, as in pi.
//
// # Reading
//
// ParseFile indexes a file by each line's envelope (type, id, parentId,
// timestamp, and a message's role) in one validating pass, on every CPU for
// large files, and keeps each line's bytes as read (Entry.Raw): unknown
// members, unknown entry types and key order survive every read and every
// append. A final line without '\n' is kept when it is a complete object
// (pi reads it too) and reported as torn otherwise (Tail).
//
// # Writing
//
// New lines are encoded exactly as JavaScript's JSON.stringify encodes them
// (AppendString, AppendNumber, ObjectBuilder: no HTML escaping, U+2028 and
// U+2029 raw, JavaScript number formatting, property order), so sessctl
// writes the bytes pi writes.
// Canonical re-encodes caller data the same way; values a double cannot
// hold exactly are kept as written. Lines carry no checksum: a torn tail is
// recognised by the missing newline and the failed parse, but bit rot
// inside a string would go unnoticed.
package jsonl
