// Package textindex is sessctl's own inverted index, the core that is to
// replace SQLite FTS5 in package search: documents (a text, a role code,
// a tool, a reference and a time) go in with ascending ids, queries
// (terms, AND, phrases, prefixes) come out newest first, stopping as soon
// as they have their limit.
//
// # Building
//
// A Builder streams documents into an in-memory table of its own (open
// addressing; term bytes and postings in a pool of fixed pages, so its
// size is counted exactly) and writes the table out as an immutable
// segment file each time it reaches half of BuildOptions.Budget, on
// another goroutine while a second table takes the next documents; the
// two never exceed the budget by more than one document. Builder.Commit publishes the
// segments with one atomic manifest write (ManifestName). Index.Merge
// merges the segments into one in a streaming k-way merge, while searches
// go on.
//
// # Files
//
// The index directory holds MANIFEST and the segment files it lists,
// NNNNNNNNNNNNNNNN.seg (hexadecimal sequence numbers). A segment is a
// 16-byte header, pages of 32 KiB each followed by its CRC32C, and a
// footer with its own CRC32C. Its regions are the documents' metadata
// (fixed records by ordinal: the ordinal is the document's rank in the
// segment, ascending with its id), the postings of each term (newest
// document first, in blocks of up to 128 documents with a skip table of
// their first ordinals, lengths and sizes; a merge copies a full block of
// an input as it is, but for its first ordinal; a block is Rice-coded runs of document gaps, frequencies, first positions and
// later position gaps, the positions decoded only for phrases), the term
// dictionary (front-coded blocks of up to 128 terms), its block index
// (first term and offset of each block, binary-searched without being
// decoded) and the tool names. Segments hold consecutive ranges of ids,
// oldest first, so a search reads them from the newest and stops at its
// limit. Files are read with ReadAt through the layout/vfs seam; every
// page read is checked. A manifest or segment that fails a check, or is
// not the one the manifest names (size, footer checksum, ids), is an
// error matching ErrCorrupt: the index is never the source of truth, and
// the caller answers by building it again. Verify checks every page.
//
// # Terms
//
// The tokenizer is close to FTS5's unicode61 with remove_diacritics: a
// term is a maximal run of Unicode letters (L*), digits and other
// numbers (Nd, Nl, No), private-use characters (Co) and combining marks
// (M*, which are dropped); everything else separates terms. Terms are
// lower-cased (unicode.ToLower), and the Latin letters with a diacritic
// of U+00C0-U+017F lose it (é -> e, ł and ø are kept, as they have no
// decomposition); other scripts keep their marks. ASCII takes a table
// lookup per byte. Terms are cut at MaxTermLen bytes. There is no
// stemming and there are no stop words.
//
// Positions are the term's rank in its document (0, 1, 2, ...), so a
// phrase is terms at consecutive positions, across any separators.
package textindex
