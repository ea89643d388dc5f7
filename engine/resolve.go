package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// Sessions and entries are named like git objects: by path, by full id,
// or by a unique prefix of the id.

// ErrAmbiguous is matched by the errors of a name that is a prefix of the
// ids of more than one session (*AmbiguousError) or entry (*EntryError).
// It is the same value as engine/agentuse's.
var ErrAmbiguous = errs.ErrAmbiguous

// Candidate is a session a name may mean: its id and its file.
type Candidate = errs.Candidate

// AmbiguousError lists the sessions a name matches (Name, and Candidates
// sorted by path); its Error names up to ten of them. It matches
// ErrAmbiguous, and is the same type as engine/agentuse's.
type AmbiguousError = errs.AmbiguousError

// ResolveSession returns the path of the JSONL session file that name
// stands for: a path to a file; otherwise a full session id, or a unique
// prefix of one (compared without regard to case), among the session
// files under dir (every *.jsonl file, recursively, leaving out the
// .trash directories where deleted sessions are kept). A name that looks
// like a path (it has a separator or ends in .jsonl) is only a path: its
// absence is ErrNotFound, and a directory is an error. An exact id wins
// over prefixes; a name that fits several sessions fails with an
// *AmbiguousError. Subdirectories of dir that cannot be read are skipped,
// but then an unknown name fails naming the first of them rather than
// with ErrNotFound.
func ResolveSession(dir, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("session %q in %s: %w", name, dir, ErrNotFound)
	}
	// A name that looks like a path is a path: only its real absence is
	// "not found". A directory, a symbolic link loop or a directory that
	// may not be searched each say what they are.
	pathLike := strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".jsonl")
	st, err := os.Stat(name)
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
	cands, unreadable, err := storeCandidates(dir)
	if err != nil {
		return "", err
	}
	var exact, prefix []Candidate
	low := strings.ToLower(name)
	for _, c := range cands {
		switch {
		case c.ID == name:
			exact = append(exact, c)
		case strings.HasPrefix(strings.ToLower(c.ID), low):
			prefix = append(prefix, c)
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

// storeCandidates lists the session files of the store at root (see
// StoreFiles) with their session ids: from the file name when it has pi's
// "<ts>_<id>.jsonl" form, otherwise from its header line. What StoreFiles
// left out (directories that could not be read, special files) is
// returned as unreadable.
func storeCandidates(root string) (out []Candidate, unreadable []error, err error) {
	files, unreadable, err := StoreFiles(context.Background(), nil, root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("session store %s: %w", root, ErrNotFound)
		}
		return nil, nil, err
	}
	for _, f := range files {
		id := SessionIDFromFileName(filepath.Base(f.Path))
		if id == "" {
			id = headerID(f.Path)
		}
		if id != "" {
			out = append(out, Candidate{ID: id, Path: f.Path})
		}
	}
	return out, unreadable, nil
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// SessionIDFromFileName returns the id part of a file name of pi's
// "<timestamp>_<id>.jsonl" form, or "" for any other name.
func SessionIDFromFileName(name string) string {
	base := strings.TrimSuffix(name, ".jsonl")
	i := strings.IndexByte(base, '_')
	if i != len("2026-03-01T09-00-00-123Z") {
		return ""
	}
	return base[i+1:]
}

// headerID reads the session id from the first line of a file.
func headerID(path string) string {
	f, err := vfs.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	buf = buf[:n]
	if i := strings.IndexByte(string(buf), '\n'); i >= 0 {
		buf = buf[:i]
	}
	e, err := jsonl.ParseEntry(buf)
	if err != nil || !e.IsHeader() || e.IDKind != jsonl.KindString {
		return ""
	}
	return e.ID
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
	if name == "" {
		return "", &EntryError{Name: name}
	}
	if _, ok := s.Entry(name); ok {
		return name, nil
	}
	var ids []string
	s.Index(func(ix *tree.Index) {
		for _, k := range ix.IDs() {
			if k != "" && k[0] >= 0x20 { // string ids only
				ids = append(ids, k)
			}
		}
	})
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

// ResolveEntryPrefix returns the id of the entry named by a full id or a
// unique prefix of one, compared as it is (case matters). An unknown name
// fails with ErrNotFound, a prefix of several ids with ErrAmbiguous,
// listing up to eight of them.
func (s *Session) ResolveEntryPrefix(name string) (string, error) {
	if _, ok := s.Entry(name); ok {
		return name, nil
	}
	var matches []string
	seen := map[string]bool{}
	for _, en := range s.Entries() {
		if en.IDKind == jsonl.KindString && strings.HasPrefix(en.ID, name) && !seen[en.ID] {
			seen[en.ID] = true
			matches = append(matches, en.ID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("entry %q in %s: %w", name, s.SessionFile(), ErrNotFound)
	}
	sort.Strings(matches)
	if len(matches) > 8 {
		matches = append(matches[:8], "...")
	}
	return "", fmt.Errorf("entry prefix %q matches %s: %w", name, strings.Join(matches, ", "), ErrAmbiguous)
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
		d := editDistance(low, strings.ToLower(id))
		if len(id) > len(name) {
			d = min(d, editDistance(low, strings.ToLower(id[:len(name)])))
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

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
