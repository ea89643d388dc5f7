package engine

// BranchTo returns the branch, root first, that ends at the entry named
// by a full id or a unique prefix (ResolveEntry), or with name "" the
// branch of the leaf: nil when the leaf is no entry (a session without
// entries, a version 1 file).
func (s *Session) BranchTo(name string) ([]*Entry, error) { return branchTo(s, name) }

// BranchTo is Session.BranchTo for a View.
func (v *View) BranchTo(name string) ([]*Entry, error) { return branchTo(v, name) }

// branchTo is BranchTo for a Session or a View.
func branchTo(s interface {
	LeafID() (string, bool)
	BranchPath(id string) []*Entry
	ResolveEntry(name string) (string, error)
}, name string) ([]*Entry, error) {
	if name == "" {
		if id, ok := s.LeafID(); !ok || id == "" {
			return nil, nil
		}
		return s.BranchPath(""), nil
	}
	id, err := s.ResolveEntry(name)
	if err != nil {
		return nil, err
	}
	return s.BranchPath(id), nil
}
