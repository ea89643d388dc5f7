// Package search finds text in every session of every store: pi and
// indusagi JSONL session files (and the sessions sessctl imported from
// other agents) and AgentUse part/message directories. It matches user
// prompts, assistant text and thinking, tool calls (name and arguments)
// and tool results, custom messages, compaction and branch summaries,
// labels and session names, with SQLite FTS5's query syntax (words,
// "phrases", prefix*, AND/OR/NOT, NEAR).
//
//	x, err := search.Open(ctx, search.Options{})
//	if err != nil {
//		return err
//	}
//	defer x.Close()
//	q := search.Query{Text: `"flaky migration"`, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: sessionsDir}}, Limit: 20}
//	for hit, err := range x.Search(ctx, q) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(hit.Time, hit.Session.Name, hit.Snippet, hit.Entry, hit.Session.Path)
//	}
//
// # The index
//
// Searches go through a full-text index kept under the user's cache
// directory (<cache>/sessctl/search; never inside an agent's store). It
// is a cache: every search first brings it up to date with the files as
// they are, so its answers are those of the files, and deleting it is
// always safe (the next search builds it again). Options.NoIndex
// searches without one, reading every file.
//
// Bringing it up to date costs one stat per file when nothing changed.
// With the own index, a search also keeps the listings of the stores'
// directories (<Dir>/own/dirs): a directory whose identity and
// modification and change times are those of a listing that a second
// listing, three seconds or more later, confirmed is not read again (an
// entry made, removed or renamed changes them; the two listings are
// timed by this machine's clock, never the filesystem's). Only
// directories on Linux's local filesystems are kept so; elsewhere every
// directory is read.
// A session file that only grew (pi and sessctl append) is indexed from
// where the last indexing stopped, once the last indexed line is found
// unchanged (its offset and CRC-32 are kept, with the file's size, time,
// inode and inode change time); a file that was replaced or shrank is
// indexed again, and so is one edited in place with its size and time put
// back, which the change time tells (no program can set it back); a
// deleted file's texts are removed. AgentUse files are indexed one by
// one, as they are replaced.
//
// The index is sessctl's own by default (Options.Engine, EngineOwn:
// search/internal/textindex's segments in <Dir>/own, with a table of the
// texts' places and a checksummed record of the files indexed and of the
// stats of its own files; one that differs from that record, or fails a
// check, is built again). It answers the same queries, and finds the
// same hits, as the SQLite FTS5 index (EngineFTS5). With it, and without
// an index, a search opens no SQLite database: the query is checked
// (with FTS5's error messages), texts are matched and their matches
// marked in Go, as an FTS5 table with the index's tokenizer does. The
// marks differ from FTS5's in corners only: FTS5 may also mark a phrase
// on the right of a NOT, or of a NEAR group that did not match, when the
// text matched through another branch of an OR (which depends on the
// other texts it was given, not on the text); a word is cut at 128 bytes
// (FTS5 keeps 32 KiB), so a query for a longer word also finds the words
// that begin with its first 128 bytes; and FTS5's special queries
// (*reads, *id) are refused. The FTS5 index is described here:
//
// The FTS5 index is SQLite (modernc.org/sqlite, no cgo) with an FTS5 table
// that stores no text, only the inverted index and, for each text, the
// file, line offset and length it came from: a hit's snippet is cut from
// the file's line itself (and a hit whose line has changed since is
// dropped). The files are split into Shards databases by session, so a
// first build indexes on several CPUs. The databases are in WAL mode
// with a busy timeout: searches read while another process indexes, and
// two indexing processes take turns (each re-reads a file's state inside
// its write transaction, so no text is indexed twice). A search has the
// databases open only for its update and query, holding a lock file in
// the index directory shared; a database file is deleted or created
// (Options.Rebuild, damage, a first search) only with that lock
// exclusive, which waits for the searches under way. A database file is
// trusted only as sessctl left it: its size, times and inode are
// recorded after every search, and a file that differs from the record
// before a search (written by another program, or by a process killed
// before it recorded) is deleted and built again. So is one SQLite
// reports damaged during a search, which then runs again, and one that
// fails Check's quick_check. An index failure is an error matching
// ErrIndex.
//
// # A resident index
//
// A process that keeps an Index open with Options.Watch (sessctl serve)
// skips the stat of every file when the watch saw nothing happen, and
// after files were only written to stats those the watch's events name.
// Server answers other processes' searches from such an index over a
// private unix socket (Linux); Ask is the client, which returns false
// (search by yourself) whenever no server can answer for the index and
// stores, so that its answer is always the hits Index.Search finds.
package search
