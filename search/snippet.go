package search

import (
	"context"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// hitMaker checks a query and makes the hits of its candidates: the
// snipper (in Go: the own engine and the search without an index) or the
// ftsSnipper (SQLite FTS5: the FTS5 engine).
type hitMaker interface {
	check(ctx context.Context, query string) error
	hits(ctx context.Context, query string, cands []candidate) ([]Hit, error)
	close()
}

// snipper checks queries, matches texts and makes snippets in Go, as an
// FTS5 table with the index's tokenizer does (match.go, matchparse.go):
// it opens no database. The index stores no text: for the hits shown,
// the texts are extracted from their files again and matched here, which
// marks the matches (and drops a hit whose file changed since it was
// indexed).
type snipper struct {
	fs    vfs.FS // where the hits' files are read
	query string
	m     *matcher // for query
}

func newSnipper(_ context.Context, fsys vfs.FS) (*snipper, error) {
	return &snipper{fs: fsys}, nil
}

func (s *snipper) close() {}

// check parses the query; match and hits then use it.
func (s *snipper) check(_ context.Context, query string) error {
	_, err := s.matcher(query)
	return err
}

func (s *snipper) matcher(query string) (*matcher, error) {
	if s.m != nil && s.query == query {
		return s.m, nil
	}
	q, err := parseMatch(query)
	if err != nil {
		return nil, err
	}
	s.query, s.m = query, newMatcher(q)
	return s.m, nil
}

// matches reports whether text matches the query.
func (s *snipper) matches(query, text string) (bool, error) {
	m, err := s.matcher(query)
	if err != nil {
		return false, err
	}
	return m.match(text), nil
}

// match returns, for the texts that match, their text with the matches
// between \x01 and \x02.
func (s *snipper) match(_ context.Context, query string, texts []string) (map[int]string, error) {
	m, err := s.matcher(query)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for i, t := range texts {
		if t == "" {
			continue
		}
		if h, ok := m.highlight(t); ok {
			out[i] = h
		}
	}
	return out, nil
}

// hits extracts the candidates' texts from their files and makes their
// snippets. Candidates whose text no longer matches are left out.
func (s *snipper) hits(ctx context.Context, query string, cands []candidate) ([]Hit, error) {
	texts := candidateTexts(s.fs, cands)
	marked, err := s.match(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	return markedHits(cands, marked), nil
}

// candidateTexts reads the candidates' texts from their files ("" for
// one whose file or line changed), and sets the entries of those whose
// entry is read from the file.
func candidateTexts(fsys vfs.FS, cands []candidate) []string {
	texts := make([]string, len(cands))
	var fh vfs.File
	var open string
	defer func() {
		if fh != nil {
			fh.Close()
		}
	}()
	var docs []doc
	for i := range cands {
		c := &cands[i]
		if c.file != open {
			if fh != nil {
				fh.Close()
				fh = nil
			}
			open = c.file
			f, err := fsys.OpenFile(c.file, os.O_RDONLY, 0)
			if err != nil {
				continue
			}
			fh = f
		}
		if fh == nil {
			continue
		}
		buf := make([]byte, c.n)
		if _, err := fh.ReadAt(buf, c.off); err != nil {
			continue
		}
		docs = docs[:0]
		if c.fkind == fileJSONL {
			e, err := jsonl.ParseEntry(buf)
			if err != nil || (c.entry != "" && e.ID != c.entry) {
				continue
			}
			if c.entryFromFile && e.IDKind == jsonl.KindString {
				c.entry = e.ID
			}
			docs = lineDocs(&e, docs)
		} else {
			var entry string
			docs, entry, _ = agentUseDocs(c.fkind, buf, docs)
			if c.entryFromFile {
				c.entry = auEntry(c.fkind, c.file, entry)
			}
		}
		if c.part < len(docs) && docs[c.part].kind == c.kind {
			texts[i] = cleanText(docs[c.part].text)
		}
	}
	return texts
}

// markedHits makes the hits of the candidates whose text matched, with
// their marked text (map key: the candidate's index).
func markedHits(cands []candidate, marked map[int]string) []Hit {
	var out []Hit
	for i := range cands {
		h, ok := marked[i]
		if !ok {
			continue
		}
		c := &cands[i]
		hit := Hit{Session: *c.sess, Entry: c.entry, File: c.file, Offset: c.off, Kind: c.kind, Role: c.kind.Role(), Tool: c.tool}
		if c.ts != 0 {
			hit.Time = time.UnixMilli(c.ts).UTC()
		}
		hit.Snippet, hit.Matches = snippet(h)
		out = append(out, hit)
	}
	return out
}

// Snippet sizes, in characters: context kept before the first match, and
// the whole snippet.
const (
	snipBefore = 60
	snipLen    = 200
)

// snippet cuts the text around the first match (marked \x01...\x02),
// folds whitespace to single spaces, and returns it with the byte ranges
// of the matches.
func snippet(h string) (string, [][2]int) {
	type r struct {
		c rune
		m bool
	}
	rs := make([]r, 0, min(len(h), 1<<16))
	in, space := false, true
	first := -1
	for _, c := range h {
		switch c {
		case 1:
			in = true
			continue
		case 2:
			in = false
			continue
		}
		if unicode.IsSpace(c) {
			if space {
				continue
			}
			c, space = ' ', true
		} else {
			space = false
		}
		if in && first < 0 {
			first = len(rs)
		}
		rs = append(rs, r{c, in})
	}
	for len(rs) > 0 && rs[len(rs)-1].c == ' ' {
		rs = rs[:len(rs)-1]
	}
	if first < 0 {
		first = 0
	}
	start := max(0, first-snipBefore)
	if start > 0 {
		// Start at a word.
		for k := start; k < first && k < start+15; k++ {
			if rs[k].c == ' ' {
				start = k + 1
				break
			}
		}
	}
	end := min(len(rs), start+snipLen)
	if end < len(rs) {
		for k := end; k > first && k > end-15; k-- {
			if rs[k].c == ' ' {
				end = k
				break
			}
		}
	}
	var sb strings.Builder
	var ms [][2]int
	if start > 0 {
		sb.WriteString("…")
	}
	for k := start; k < end; k++ {
		if rs[k].m && (k == start || !rs[k-1].m) {
			ms = append(ms, [2]int{sb.Len(), 0})
		}
		sb.WriteRune(rs[k].c)
		if rs[k].m && (k+1 == end || !rs[k+1].m) {
			ms[len(ms)-1][1] = sb.Len()
		}
	}
	if end < len(rs) {
		sb.WriteString("…")
	}
	return sb.String(), ms
}
