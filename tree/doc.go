// Package tree indexes the entries of one JSONL session in memory: entries
// by id, children, the leaf, root-to-leaf branches, pi's tree order, labels
// and the session name. It does no I/O and decodes only the few fields it
// needs (label targets and texts, session names).
//
// Every answer matches pi's SessionManager (1.6.0, the reference) for
// the files pi can load. Where pi loops forever (parent cycles, self-parented entries on a
// walk, repeated ids that make a node its own ancestor) the index stops at
// the first repeat instead.
//
// Entries are the JSON codec's, which is internal; this package gives
// them their public names (Entry, Header, Kind and the kinds), which
// compaction, migrate and engine use (engine.Entry is tree.Entry).
package tree
