package layout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file knows where AgentUse (0.15.0) keeps its sessions and how it
// names them:
//
//	$DATA/agentuse/project/<projhash>/session/
//	  <sessionID>-<agentDir>/             a top-level session
//	    session.json  tools.json  context.json
//	    <messageID>/message.json
//	    <messageID>/part/<partID>.json
//	    <messageID>/artifact/tool-output-<tool>-<ULID>.json|.txt
//	    subagent/<childID>-<childAgentDir>/   the same, recursively
//
// $DATA is $XDG_DATA_HOME when set and non-empty, else <home>/.local/share,
// on every operating system. <projhash> is the first 16 hex digits of the
// SHA-256 of the project's git top-level directory, or of the absolute state
// root outside git. <agentDir> is SanitizeAgentName(agent.id).

// File and directory names inside an AgentUse session directory.
const (
	AgentUseSessionFile = "session.json" // SessionInfo
	AgentUseMessageFile = "message.json" // in <messageID>/
	AgentUseToolsFile   = "tools.json"   // tools snapshot
	AgentUseContextFile = "context.json" // context snapshot
	AgentUsePartDir     = "part"         // in <messageID>/
	AgentUseArtifactDir = "artifact"     // in <messageID>/
	AgentUseSubagentDir = "subagent"     // child sessions
	// AgentUseLockFile is sessctl's writer lock inside a session directory.
	// Its owner record is "session.owner" (lock.OwnerPath). Neither name
	// ends in ".json", so AgentUse's readers ignore both.
	AgentUseLockFile = "session.lock"
)

// AgentUseDataDir resolves AgentUse's data root from the process
// environment: $XDG_DATA_HOME when set and non-empty, else
// <home>/.local/share.
func AgentUseDataDir() (string, error) {
	if v := os.Getenv("XDG_DATA_HOME"); v != "" {
		return v, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("resolve AgentUse data directory: %w", err)
	}
	return AgentUseDataDirFrom(os.Getenv, home), nil
}

// AgentUseDataDirFrom is AgentUseDataDir over env and a home directory. The
// value of XDG_DATA_HOME is used as it is (a relative value stays
// relative), as AgentUse does; the same rule holds on every OS.
func AgentUseDataDirFrom(env Env, home string) string {
	if v := env("XDG_DATA_HOME"); v != "" {
		return v
	}
	return filepath.Join(home, ".local", "share")
}

// AgentUseProjectsDir returns <data>/agentuse/project, the parent of every
// project directory.
func AgentUseProjectsDir(dataDir string) string {
	return filepath.Join(dataDir, "agentuse", "project")
}

// AgentUseSessionRoot returns <data>/agentuse/project/<hash>/session, the
// directory that holds a project's top-level sessions.
func AgentUseSessionRoot(dataDir, hash string) string {
	return filepath.Join(AgentUseProjectsDir(dataDir), hash, "session")
}

// AgentUseProjectHash returns the first 16 lower-case hex digits of the
// SHA-256 of source, AgentUse's project directory name.
func AgentUseProjectHash(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:8])
}

// GitTopLevel reports the top-level directory of the git work tree that
// contains dir, or an error when there is none.
type GitTopLevel func(ctx context.Context, dir string) (string, error)

// GitShowTopLevel runs "git rev-parse --show-toplevel" in dir with the
// process environment (so GIT_DIR and friends apply), stderr discarded, and
// returns its raw output. It is the GitTopLevel AgentUse uses.
func GitShowTopLevel(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse --show-toplevel in %s: %w", dir, err)
	}
	return string(out), nil
}

// AgentUseHashSource returns the string AgentUse hashes for the state root
// stateRoot: git's top-level directory (its output trimmed as JavaScript's
// String.prototype.trim does) when git finds one from the absolute state
// root, else the absolute state root itself, cleaned lexically like Node's
// path.resolve (symbolic links are not resolved). A nil git means the
// project is not in a git work tree. The process working directory is read
// only when stateRoot is relative.
func AgentUseHashSource(ctx context.Context, stateRoot string, git GitTopLevel) (string, error) {
	abs, err := filepath.Abs(stateRoot)
	if err != nil {
		return "", fmt.Errorf("resolve state root %s: %w", stateRoot, err)
	}
	if git != nil {
		if top, err := git(ctx, abs); err == nil {
			return jsTrim(top), nil
		}
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("resolve project of %s: %w", stateRoot, err)
		}
	}
	return abs, nil
}

// SanitizeAgentName is AgentUse's sanitizeAgentName, exactly: a name that
// is empty or only whitespace becomes "default"; otherwise the name is
// lower-cased as JavaScript's toLowerCase does, every character outside
// [a-z0-9_-] becomes '-', runs of '-' collapse to one, one leading and one
// trailing '-' are removed, and an empty result becomes "default".
//
// Only two non-ASCII characters lower-case to something that contains
// ASCII: U+0130 (to "i" plus U+0307, so "i-") and U+212A KELVIN SIGN (to
// "k"). Every other non-ASCII character becomes '-'. The result only ever
// holds [a-z0-9_-], so it is always a safe single path element.
func SanitizeAgentName(name string) string {
	if jsTrim(name) == "" {
		return "default"
	}
	b := make([]byte, 0, len(name))
	dash := func() {
		if len(b) == 0 || b[len(b)-1] != '-' {
			b = append(b, '-')
		}
	}
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'A' && c <= 'Z':
				b = append(b, c+'a'-'A')
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
				b = append(b, c)
			default:
				dash()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		switch r {
		case 0x0130: // LATIN CAPITAL LETTER I WITH DOT ABOVE -> "i\u0307"
			b = append(b, 'i')
			dash()
		case 0x212A: // KELVIN SIGN -> "k"
			b = append(b, 'k')
		default:
			dash()
		}
	}
	s := string(b)
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return "default"
	}
	return s
}

// ErrBadID is returned, wrapped, for a session, message or part id that is
// not an uppercase Crockford base32 ULID. It also matches ErrUnsafeName,
// since such an id is never used in a path.
var ErrBadID = errors.New("not a ULID")

type idError struct{ id string }

// Error names the id and what an id must look like.
func (e *idError) Error() string {
	return "invalid id " + strconv.Quote(e.id) + ": want 26 uppercase Crockford base32 characters"
}

// Is reports whether target is ErrBadID or ErrUnsafeName.
func (e *idError) Is(target error) bool { return target == ErrBadID || target == ErrUnsafeName }

// IsAgentUseID reports whether id matches ^[0-9A-HJKMNP-TV-Z]{26}$: an
// uppercase Crockford base32 ULID, as AgentUse makes for sessions,
// messages, parts and artifacts.
func IsAgentUseID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !isCrockford(id[i]) {
			return false
		}
	}
	return true
}

func isCrockford(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	case c >= 'A' && c <= 'Z':
		return c != 'I' && c != 'L' && c != 'O' && c != 'U'
	}
	return false
}

// CheckAgentUseID returns an error matching ErrBadID and ErrUnsafeName
// when id is not an AgentUse id (see IsAgentUseID). Every id passes this
// check before it becomes part of a path.
func CheckAgentUseID(id string) error {
	if !IsAgentUseID(id) {
		return &idError{id}
	}
	return nil
}

// maxNameBytes is the usual limit on one path element.
const maxNameBytes = 255

// AgentUseSessionDirName returns "<id>-<SanitizeAgentName(agentID)>", the
// name of a session's directory.
func AgentUseSessionDirName(id, agentID string) (string, error) {
	if err := CheckAgentUseID(id); err != nil {
		return "", err
	}
	name := id + "-" + SanitizeAgentName(agentID)
	if len(name) > maxNameBytes {
		return "", fmt.Errorf("session directory name for agent %s: %d bytes is longer than %d: %w",
			strconv.Quote(agentID), len(name), maxNameBytes, ErrUnsafeName)
	}
	return name, nil
}

// AgentUseSubagentPath returns <parentDir>/subagent/<childID>-<agentDir>,
// where a child session of the session in parentDir lives.
func AgentUseSubagentPath(parentDir, childID, childAgentID string) (string, error) {
	name, err := AgentUseSessionDirName(childID, childAgentID)
	if err != nil {
		return "", err
	}
	return filepath.Join(parentDir, AgentUseSubagentDir, name), nil
}

// SplitAgentUseDirName splits a session directory name "<ULID>-<agentDir>"
// at its first '-'. ok is false when the name does not start with a
// well-formed id followed by '-' and at least one character (the pattern
// AgentUse's CLI requires; discovery itself accepts any name).
func SplitAgentUseDirName(name string) (id, agentDir string, ok bool) {
	if len(name) < 28 || name[26] != '-' || !IsAgentUseID(name[:26]) {
		return "", "", false
	}
	return name[:26], name[27:], true
}

// AgentUseMessagePath returns <sessionDir>/<messageID>/message.json.
func AgentUseMessagePath(sessionDir, messageID string) (string, error) {
	if err := CheckAgentUseID(messageID); err != nil {
		return "", err
	}
	return filepath.Join(sessionDir, messageID, AgentUseMessageFile), nil
}

// AgentUsePartPath returns <sessionDir>/<messageID>/part/<partID>.json.
func AgentUsePartPath(sessionDir, messageID, partID string) (string, error) {
	if err := CheckAgentUseID(messageID); err != nil {
		return "", err
	}
	if err := CheckAgentUseID(partID); err != nil {
		return "", err
	}
	return filepath.Join(sessionDir, messageID, AgentUsePartDir, partID+".json"), nil
}

// AgentUseArtifactName returns "tool-output-<tool>-<id>.<ext>": tool is
// SanitizeAgentName(toolName) cut to 48 bytes, or "tool" when that is
// empty; ext is "json" or "txt".
func AgentUseArtifactName(toolName, id, ext string) (string, error) {
	if err := CheckAgentUseID(id); err != nil {
		return "", err
	}
	if ext != "json" && ext != "txt" {
		return "", fmt.Errorf("artifact extension %s: want json or txt: %w", strconv.Quote(ext), ErrUnsafeName)
	}
	tool := SanitizeAgentName(toolName)
	if len(tool) > 48 {
		tool = tool[:48] // ASCII only, so bytes are UTF-16 units
	}
	if tool == "" {
		tool = "tool"
	}
	return "tool-output-" + tool + "-" + id + "." + ext, nil
}

// IsAgentUseDataFile reports whether a directory entry name is one that
// AgentUse's readers consider: it ends in ".json". Temporary files of
// atomic writes (AgentUse's "*.tmp", sessctl's ".tmp-*") and sessctl's
// lock and owner files never do.
func IsAgentUseDataFile(name string) bool { return strings.HasSuffix(name, ".json") }
