package engine

import (
	"errors"
	"os"
	"strings"

	"github.com/sessctl/sessctl/layout"
)

// StoreDir returns the directory a JSONL store keeps its session files
// in: "pi" (or "") and "indusagi" name those agents' stores, where the
// environment puts them; any other store is a directory. "agentuse" is
// refused: it holds AgentUse sessions, not session files.
func StoreDir(store string) (string, error) {
	switch store {
	case "", "pi":
		dir, err := layout.AgentDir(layout.AgentPi)
		return layout.SessionsDir(dir), err
	case "indusagi":
		dir, err := layout.AgentDir(layout.AgentIndusagi)
		return layout.SessionsDir(dir), err
	case "agentuse":
		return "", errors.New("--store agentuse holds AgentUse sessions, not JSONL session files")
	}
	return store, nil
}

// ResolveInStore is ResolveSession for a name people type: a name with
// a path separator or the .jsonl suffix, or one that names an existing
// file, is a path and needs no store; any other is an id or unique id
// prefix looked up in StoreDir(store).
func ResolveInStore(store, name string) (string, error) {
	if strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".jsonl") {
		return ResolveSession("", name)
	}
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		return name, nil
	}
	root, err := StoreDir(store)
	if err != nil {
		return "", err
	}
	return ResolveSession(root, name)
}

// BranchTo returns the branch, root first, that ends at the entry named
// by a full id or unique prefix (ResolveEntryPrefix), or with name ""
// the branch of the leaf: nil when the leaf is null or not a string id
// (a session without entries, a version 1 file).
func (s *Session) BranchTo(name string) ([]*Entry, error) {
	if name == "" {
		if id, ok := s.LeafID(); !ok || id == "" {
			return nil, nil
		}
		return s.BranchPath(""), nil
	}
	id, err := s.ResolveEntryPrefix(name)
	if err != nil {
		return nil, err
	}
	return s.BranchPath(id), nil
}
