// Package layout knows where sessions live and what their files are
// called, and nothing else: agent directories, the per-cwd directory,
// session file names, AgentUse's project hash and directory names, and the
// checks that keep ids and names from escaping their directory. It reads
// no file and writes none; the one thing it runs is git, to find a
// project's top level.
//
// # pi and indusagi
//
// pi keeps sessions under its agent directory ($PI_CODING_AGENT_DIR, with
// "~" expanded, default ~/.pi/agent), indusagi under its own
// ($INDUSAGI_AGENT_DIR, $INDUSAGI_CODING_AGENT_DIR, $INDUSAGI_DIR/agent,
// default ~/.indusagi/agent), in sessions/--<cwd>--/, where the cwd has one
// leading separator removed and every '/', '\' and ':' replaced by '-'
// (CwdDirName). A file is named <ISO time with ':' and '.' as '-'>_<id>.jsonl
// (SessionFileName).
//
// # AgentUse
//
// AgentUse keeps part/message directories under $XDG_DATA_HOME/agentuse, in
// project/<hash>/session/<ULID>-<agent>/, where the hash is taken from the
// project's git top level (found by running git, GitShowTopLevel) or its
// absolute path (AgentUseHashSource, AgentUseProjectHash), and the agent
// name is sanitised as AgentUse does (SanitizeAgentName). Ids must be
// ULIDs (CheckAgentUseID).
//
// # Places
//
// A place is somewhere sessions are kept: a name, a format (FormatJSONL,
// FormatAgentUse) and a root directory (Place). ResolvePlaces is the one
// parser of store names: "pi", "indusagi", "agentuse", "all", or a
// directory, which stands for the sessions of both formats below it; any
// other bare word is an UnknownPlaceError. MachinePlaces lists this
// machine's places: pi's, indusagi's and AgentUse's.
//
// # The environment
//
// Only AgentDir, AgentUseDataDir, ResolvePlaces, MachinePlaces and the
// other explicit resolvers read the environment; their ...From forms take
// it as an argument.
//
// # Where the rest went
//
// What the lines of a session file hold, and how they are parsed and
// encoded, is the internal JSON codec (internal/jsonl), which layout does
// not import: layout needs only the standard library. How files are
// written (atomic replace, 0600 files and 0700 directories, never through
// a symbolic link) is the filesystem seam, package layout/vfs, whose test
// filesystems are in layout/vfs/vfstest.
package layout
