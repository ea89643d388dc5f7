// Package migrate upgrades pi/indusagi session files from format version 1
// and 2 to version 3, as a chain of small pure steps over records:
//
//   - v1 -> v2: every entry gets an id and a parentId that links the
//     entries into one chain in file order; a compaction's
//     firstKeptEntryIndex (which counts the header as 0) becomes
//     firstKeptEntryId; headers get version 2;
//   - v2 -> v3: message entries with role hookMessage get role custom;
//     headers get version 3.
//
// Keys a step adds go at the end of their object, where pi puts them;
// every other member keeps its place. Unlike pi, whose v1 ids are random
// and unchecked (duplicates turned large files into parent cycles), the v1
// ids here are derived from the session id and the line and never repeat,
// so migrating two copies of a file gives identical bytes and a second run
// changes nothing.
//
// Entries migrates in memory (a read-only open); Stream and File rewrite a
// file one line at a time, with memory bounded by the longest line.
// InMemory and InPlace migrate in memory and also give the bytes File
// would write, which WriteFile writes with File's crash-safe replacement:
// a write-mode open migrates once, and its first write writes the result
// without reading the file again.
//
// Importers bring other agents' sessions into version 3 files, one
// subpackage per source (claude, codex, gemini, cursor, windsurf,
// opencode, agsh, goose, crush; the list is migrate/sources), each
// behind the Source and Store interfaces: detect a store, list its
// sessions, convert one. They
// share a Builder that derives entry ids from source ids (collision
// checked, so a re-import gives identical bytes), keeps the source's
// branches and writes the active branch last, and starts every file with
// a provenance entry (custom, customType "sessctl-import"). CheckReplace
// tells whether an existing file is an untouched earlier import that a
// re-import may replace.
package migrate
