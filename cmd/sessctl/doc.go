// Command sessctl lists, shows, forks, branches, compacts, verifies,
// repairs, migrates and imports AI agents' sessions: pi/indusagi JSONL
// session trees and AgentUse part/message directories.
//
// Usage:
//
//	sessctl <command> [flags] [arguments]
//
// Run `sessctl help` for the commands and `sessctl help <command>` for one
// command's flags and examples. Sessions are named by path, full id or a
// unique id prefix, looked up in pi's store unless --store says otherwise.
// Only the requested output goes to stdout; errors go to stderr as
// "sessctl: <command>: <error>" with a "hint:" line. Exit codes: 0 ok,
// 1 failure, 2 usage, 3 locked, 4 corrupt or verify failed, 5 not found.
package main
