package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// resolveIn is Store.Resolve in the store at dir on fsys. Sessions and
// entries are named like git objects: by path, by full id, or by a unique
// prefix of the id.
func resolveIn(ctx context.Context, o listing, dir, name string) (string, error) {
	fsys := o.fs()
	if name == "" {
		return "", fmt.Errorf("session %q in %s: %w", name, dir, ErrNotFound)
	}
	// A name that looks like a path is a path: only its real absence is
	// "not found". A directory, a symbolic link loop or a directory that
	// may not be searched each say what they are.
	pathLike := strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".jsonl")
	st, err := fsys.Stat(name)
	switch {
	case err == nil && !st.IsDir():
		return name, nil
	case !pathLike:
		// Not a file here: an id or an id prefix.
	case err == nil:
		return "", fmt.Errorf("session file %s: %w", name, syscall.EISDIR)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("session file %s: %w", name, ErrNotFound)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("session file %s: %w", name, err)
	}
	cands, unreadable, err := storeCandidates(ctx, o, dir)
	if err != nil {
		return "", err
	}
	var exact, prefix []errs.Candidate
	for _, c := range cands {
		switch {
		case c.ID == name || c.nameID == name:
			exact = append(exact, c.Candidate)
		case shortid.HasPrefix(c.ID, name) || c.nameID != "" && shortid.HasPrefix(c.nameID, name):
			prefix = append(prefix, c.Candidate)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0].Path, nil
	case len(exact) > 1:
		return "", &AmbiguousError{Name: name, Candidates: exact}
	case len(prefix) == 1:
		return prefix[0].Path, nil
	case len(prefix) > 1:
		return "", &AmbiguousError{Name: name, Candidates: prefix}
	}
	if len(unreadable) > 0 {
		// It may be in what could not be read: say so, not "not found".
		dirs, files := 0, 0
		first := unreadable[0] // a directory when there is one
		for _, err := range unreadable {
			if errors.Is(err, vfs.ErrNotRegular) {
				files++
			} else {
				if dirs == 0 {
					first = err
				}
				dirs++
			}
		}
		var parts []string
		if dirs > 0 {
			parts = append(parts, plural(dirs, "directory", "directories"))
		}
		if files > 0 {
			parts = append(parts, plural(files, "file", "files"))
		}
		what := strings.Join(parts, " and ")
		return "", fmt.Errorf("session %q in %s: not among the sessions that could be read (%s could not be read): %w",
			name, dir, what, first)
	}
	return "", fmt.Errorf("session %q in %s: %w", name, dir, ErrNotFound)
}

// candidate is a session file with the ids it is named by: its header's
// (Candidate.ID) and the one its name carries, when another.
type candidate struct {
	errs.Candidate
	nameID string
}

// storeCandidates lists the session files of the store at root (see
// Store.Files) with their session ids: the header's, read by a listing
// (with the list index), and the one the file name carries when it has
// pi's "<ts>_<id>.jsonl" form, which is the id of a file without a
// header. What the walk left out (directories that could not be read,
// special files) is returned as unreadable.
func storeCandidates(ctx context.Context, o listing, root string) (out []candidate, unreadable []error, err error) {
	o.NoText, o.Progress, o.Warn = true, nil, nil
	o = o.withCache()
	dirs, unreadable, err := walkStore(ctx, root, func(dir string) (dirFiles, error) {
		return sessionFilesIndexed(o, dir)
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("session store %s: %w", root, ErrNotFound)
		}
		return nil, nil, err
	}
	infos, err := listFiles(ctx, o, dirs)
	if err != nil {
		return nil, nil, err
	}
	headerIDs := make(map[string]string, len(infos))
	for i := range infos {
		if jsonl.KindOf(infos[i].idJSON) == KindString { // a string id, as a name can only be
			headerIDs[infos[i].Path] = infos[i].ID
		}
	}
	for _, d := range dirs {
		for _, name := range d.names {
			path := filepath.Join(d.dir, name)
			c := candidate{Candidate: errs.Candidate{ID: headerIDs[path], Path: path}}
			if n := sessionfile.IDFromFileName(name); n != "" && n != c.ID {
				c.nameID = n
			}
			if c.ID == "" {
				c.ID, c.nameID = c.nameID, ""
			}
			if c.ID != "" {
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return strings.Compare(a.Path, b.Path) })
	return out, unreadable, nil
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// EntryError is an entry name that names no entry, or several; it lists
// the ids that were maybe meant. It matches ErrNotFound, or ErrAmbiguous
// when Ambiguous is set.
type EntryError struct {
	Name        string
	Suggestions []string // at most five, then "..."
	Ambiguous   bool     // Name is a prefix of every suggestion
}

// Error says that the entry is ambiguous or not found, with the ids that
// were maybe meant.
func (e *EntryError) Error() string {
	var b strings.Builder
	if e.Ambiguous {
		fmt.Fprintf(&b, "entry %q is ambiguous: it is a prefix of %s", e.Name, strings.Join(e.Suggestions, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "entry %q not found", e.Name)
	if len(e.Suggestions) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(e.Suggestions, ", "))
	}
	return b.String()
}

// Unwrap makes an unknown entry match ErrNotFound and an ambiguous prefix
// ErrAmbiguous.
func (e *EntryError) Unwrap() error {
	if e.Ambiguous {
		return ErrAmbiguous
	}
	return ErrNotFound
}

// maxSuggestions bounds the ids an EntryError lists.
const maxSuggestions = 5

// ResolveEntry returns the id of the entry name stands for: a full id, or
// a unique prefix of one compared without regard to case. An unknown
// name fails with an *EntryError suggesting the ids within a small edit
// distance; a prefix of several ids fails listing them.
func (s *Session) ResolveEntry(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return resolveEntry(s.ix, name)
}

// resolveEntry is ResolveEntry in the index ix.
func resolveEntry(ix *tree.Index, name string) (string, error) {
	if name == "" {
		return "", &EntryError{Name: name}
	}
	if ix.Has(name) {
		return name, nil
	}
	var ids []string
	for _, k := range ix.IDs() {
		if k != "" && k[0] >= 0x20 { // string ids only
			ids = append(ids, k)
		}
	}
	low := strings.ToLower(name)
	var prefixed []string
	for _, id := range ids {
		if strings.HasPrefix(strings.ToLower(id), low) {
			prefixed = append(prefixed, id)
		}
	}
	switch {
	case len(prefixed) == 1:
		return prefixed[0], nil
	case len(prefixed) > 1:
		slices.Sort(prefixed)
		if len(prefixed) > maxSuggestions {
			prefixed = append(prefixed[:maxSuggestions], "...")
		}
		return "", &EntryError{Name: name, Suggestions: prefixed, Ambiguous: true}
	}
	return "", &EntryError{Name: name, Suggestions: closeIDs(name, ids)}
}

// closeIDs returns the ids within edit distance 2 of name (1 for short
// names), nearest first, at most maxSuggestions.
func closeIDs(name string, ids []string) []string {
	limit := 2
	if len(name) < 5 {
		limit = 1
	}
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	low := strings.ToLower(name)
	for _, id := range ids {
		// Compare with the id cut to the name's length too, so a
		// mistyped prefix still finds its id.
		d := human.EditDistance(low, strings.ToLower(id))
		if len(id) > len(name) {
			d = min(d, human.EditDistance(low, strings.ToLower(id[:len(name)])))
		}
		if d <= limit {
			cs = append(cs, cand{id, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.id, b.id)
	})
	var out []string
	for i, c := range cs {
		if i == maxSuggestions {
			break
		}
		out = append(out, c.id)
	}
	return out
}
