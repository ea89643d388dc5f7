package layout

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file is the one vocabulary of places: what a store name on a
// command line (or in a program's configuration) stands for. Every
// command and library that takes "pi", "indusagi", "agentuse", "all" or
// a directory resolves it here, so that a name means the same thing
// everywhere.

// Format is the on-disk format of the sessions of a place.
type Format uint8

// The formats of places.
const (
	// FormatJSONL is pi's and indusagi's JSONL session files (and the
	// sessions sessctl imports from other agents).
	FormatJSONL Format = iota + 1
	// FormatAgentUse is AgentUse's part/message directories.
	FormatAgentUse
)

// String returns "jsonl" or "agentuse" ("unknown" for any other value).
func (f Format) String() string {
	switch f {
	case FormatJSONL:
		return "jsonl"
	case FormatAgentUse:
		return "agentuse"
	}
	return "unknown"
}

// The store names ResolvePlaces knows. Any other value is a directory
// when it looks like a path (IsPlaceName), an unknown name otherwise.
const (
	PlacePi       = "pi"       // pi's sessions: <pi's agent directory>/sessions
	PlaceIndusagi = "indusagi" // indusagi's sessions: <indusagi's agent directory>/sessions
	PlaceAgentUse = "agentuse" // AgentUse's sessions of every project: <data>/agentuse/project
	PlaceAll      = "all"      // every place of this machine (MachinePlaces)
)

// Place is somewhere sessions are kept: a name, a format and a root.
type Place struct {
	// Name is what the place is called: PlacePi, PlaceIndusagi,
	// PlaceAgentUse, or the directory as the user named it.
	Name string
	// Format is the format of its sessions.
	Format Format
	// Root is its directory. For FormatJSONL, a directory whose session
	// files (*.jsonl) are found recursively (pi's <agent dir>/sessions,
	// or any directory); for FormatAgentUse, a directory above AgentUse
	// session directories, found at any depth (<data>/agentuse/project
	// for every project, a project's session directory, or any
	// directory).
	Root string
}

// ErrUnknownPlace is matched (errors.Is) by the error of a store name
// ResolvePlaces does not know: an *UnknownPlaceError.
var ErrUnknownPlace = errors.New("unknown store name")

// UnknownPlaceError is the error of a store name that is neither a known
// name nor a directory.
type UnknownPlaceError struct {
	Name string
}

// Error says which name is unknown and what would be known.
func (e *UnknownPlaceError) Error() string {
	return "unknown store name " + strconv.Quote(e.Name) + ": use pi, indusagi, agentuse, all or a directory (./" + e.Name + " for one in the working directory)"
}

// Unwrap returns ErrUnknownPlace.
func (e *UnknownPlaceError) Unwrap() error { return ErrUnknownPlace }

// IsPlaceName reports whether a store value is a name rather than a
// directory: "" (pi's, the default) or a value with no path separator
// that is not absolute and does not start with "." or "~". A name is
// either known (PlacePi, PlaceIndusagi, PlaceAgentUse, PlaceAll) or an
// unknown name; a relative directory in the working directory is named
// "./DIR".
func IsPlaceName(s string) bool {
	if s == "" {
		return true
	}
	if strings.ContainsAny(s, `/\`) || filepath.IsAbs(s) || filepath.VolumeName(s) != "" {
		return false
	}
	return !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "~")
}

// ResolvePlaces returns the places a store name or directory stands for,
// with the agents' directories resolved from the process environment
// (ResolvePlacesFrom).
func ResolvePlaces(name string) ([]Place, error) {
	home, err := os.UserHomeDir()
	if err != nil && IsPlaceName(name) {
		return nil, err
	}
	return ResolvePlacesFrom(name, os.Getenv, home)
}

// ResolvePlacesFrom returns the places a store name or directory stands
// for, with the agents' directories resolved from env and home:
//
//   - "" and "pi": pi's place;
//   - "indusagi": indusagi's place;
//   - "agentuse": AgentUse's place, every project;
//   - "all": every place of the machine (MachinePlacesFrom);
//   - a directory (IsPlaceName false; "~" and "~/" expanded to home):
//     both formats below it, its JSONL place first, both named as given;
//   - any other name: an *UnknownPlaceError.
//
// It reads no file: a place may not exist.
func ResolvePlacesFrom(name string, env Env, home string) ([]Place, error) {
	switch name {
	case "", PlacePi:
		return []Place{jsonlPlace(AgentPi, env, home)}, nil
	case PlaceIndusagi:
		return []Place{jsonlPlace(AgentIndusagi, env, home)}, nil
	case PlaceAgentUse:
		return []Place{agentUsePlace(env, home)}, nil
	case PlaceAll:
		return MachinePlacesFrom(env, home), nil
	}
	if IsPlaceName(name) {
		return nil, &UnknownPlaceError{Name: name}
	}
	root := filepath.Clean(ExpandHome(name, home))
	return []Place{{Name: name, Format: FormatJSONL, Root: root}, {Name: name, Format: FormatAgentUse, Root: root}}, nil
}

// MachinePlaces returns the places of this machine, from the process
// environment (MachinePlacesFrom).
func MachinePlaces() ([]Place, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	return MachinePlacesFrom(os.Getenv, home), nil
}

// MachinePlacesFrom returns the places of a machine whose environment is
// env and whose home directory is home, in this order: pi's sessions
// (<AgentDirFrom(AgentPi)>/sessions), indusagi's, and AgentUse's every
// project (<AgentUseDataDirFrom>/agentuse/project). Whether each exists
// is for the caller to find out.
func MachinePlacesFrom(env Env, home string) []Place {
	return []Place{jsonlPlace(AgentPi, env, home), jsonlPlace(AgentIndusagi, env, home), agentUsePlace(env, home)}
}

// Places returns the places of ps whose format is f, in order.
func Places(ps []Place, f Format) []Place {
	var out []Place
	for _, p := range ps {
		if p.Format == f {
			out = append(out, p)
		}
	}
	return out
}

func jsonlPlace(a Agent, env Env, home string) Place {
	return Place{Name: a.String(), Format: FormatJSONL, Root: SessionsDir(AgentDirFrom(a, env, home))}
}

func agentUsePlace(env Env, home string) Place {
	return Place{Name: PlaceAgentUse, Format: FormatAgentUse, Root: AgentUseProjectsDir(AgentUseDataDirFrom(env, home))}
}
