package repair

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// Finding is one problem or note of Verify, or one change of Repair.
// Kind is one of the kinds listed in the package documentation; Line is
// 1-based, 0 when the finding is about the whole file; ID is the entry's
// id where one applies.
type Finding struct {
	Kind    string `json:"kind"`
	Line    int    `json:"line,omitempty"`
	ID      string `json:"id,omitempty"`
	Message string `json:"message"`
}

// Report is what Verify says about one file. SessionID and Version are
// nil without a valid header; Entries counts the JSON object lines other
// than headers. OK is set when there are no Problems; Notes do not fail
// a file.
type Report struct {
	Path      string    `json:"path"`
	OK        bool      `json:"ok"`
	SessionID *string   `json:"sessionId"`
	Version   *float64  `json:"version"`
	Lines     int       `json:"lines"`
	Entries   int       `json:"entries"`
	Problems  []Finding `json:"problems"`
	Notes     []Finding `json:"notes"`
}

// problem adds a problem to the report.
func (r *Report) problem(kind string, line int, id, format string, a ...any) {
	r.Problems = append(r.Problems, Finding{Kind: kind, Line: line, ID: id, Message: fmt.Sprintf(format, a...)})
}

// note adds a note to the report.
func (r *Report) note(kind string, line int, id, format string, a ...any) {
	r.Notes = append(r.Notes, Finding{Kind: kind, Line: line, ID: id, Message: fmt.Sprintf(format, a...)})
}

// knownTypes are the entry types of format version 3.
var knownTypes = map[string]bool{jsonl.TypeSession: true, jsonl.TypeMessage: true, jsonl.TypeThinkingLevelChange: true, jsonl.TypeModelChange: true, jsonl.TypeCompaction: true, jsonl.TypeBranchSummary: true, jsonl.TypeCustom: true, jsonl.TypeCustomMessage: true, jsonl.TypeLabel: true, jsonl.TypeSessionInfo: true, jsonl.TypeUsage: true, jsonl.TypeContextEdit: true}

// verifyData checks the bytes of one session file.
func Verify(path string, data []byte) *Report {
	r := &Report{Path: path, Problems: []Finding{}, Notes: []Finding{}}
	p := jsonl.ParseFile(data)
	r.Lines = p.Lines

	// Lines.
	for _, bad := range p.Malformed {
		line := data[bad.Offset : bad.Offset+int64(bad.Bytes)]
		if jsonl.Valid(line) {
			r.problem("not-object", bad.Line, "", "line %d is JSON but not an object: %s", bad.Line, human.CutRunes(strings.TrimSpace(string(line)), 40))
		} else {
			r.problem("malformed", bad.Line, "", "line %d is not valid JSON: %v", bad.Line, bad.Err)
		}
	}
	switch p.Tail {
	case jsonl.TailTorn:
		r.problem("torn-tail", p.Lines, "", "line %d is an unfinished write: %s without a newline at the end of the file", p.Lines, human.Plural(int(p.Size-p.TailOffset), "byte", "bytes"))
	case jsonl.TailNoNewline:
		r.problem("no-final-newline", p.Lines, "", "line %d, the last, has no newline; appending to the file would corrupt it", p.Lines)
	case jsonl.TailWhitespace:
		r.note("trailing-space", p.Lines, "", "whitespace after the last newline")
	}
	if crlf := bytes.Count(data, []byte("\r\n")); crlf > 0 {
		verb := "end"
		if crlf == 1 {
			verb = "ends"
		}
		r.note("crlf", 0, "", "%s %s in CRLF", human.Plural(crlf, "line", "lines"), verb)
	}
	if len(p.Entries) == 0 && len(p.Malformed) == 0 && p.Tail != jsonl.TailTorn {
		r.problem("empty", 0, "", "the file is empty: it has no session header")
		return r
	}

	// Header.
	entries := p.Entries
	if len(entries) == 0 || !entries[0].IsHeader() {
		line := 0
		if len(entries) > 0 {
			line = entries[0].Line
		}
		r.problem("no-header", line, "", "the first JSON object is not a session header; pi would discard the whole file")
	} else {
		h := jsonl.ParseHeader(entries[0])
		if h.IDString {
			r.SessionID = &h.ID
		} else {
			r.problem("bad-header", h.Line, "", "the session header's id is not a string; pi would discard the whole file")
		}
		v := migrate.VersionOf(&entries[0])
		if !math.IsNaN(v) {
			r.Version = &v
		}
		switch {
		case math.IsNaN(v):
			r.problem("version", h.Line, "", "the header's version is not a number")
		case v > jsonl.CurrentVersion:
			r.problem("version", h.Line, "", "version %v is newer than %d, the newest this sessctl reads", v, jsonl.CurrentVersion)
		case migrate.Needed(v):
			r.note("legacy-version", h.Line, "", "version %v: pi migrates it to %d on open, sessctl at its first write", v, jsonl.CurrentVersion)
			if m, _, err := migrate.Entries(entries); err != nil {
				r.problem("malformed", h.Line, "", "the file cannot be migrated: %v", err)
			} else {
				entries = m
			}
		}
		if !h.HasCwd {
			r.note("no-cwd", h.Line, "", "the header has no cwd")
		}
		if _, ok := jsonl.ParseDate(h.Timestamp); !ok {
			r.note("bad-timestamp", h.Line, "", "the header has no valid timestamp")
		}
	}
	var body []*jsonl.Entry
	seenHeader := false
	for i := range entries {
		en := &entries[i]
		if en.IsHeader() {
			if seenHeader {
				r.problem("extra-header", en.Line, "", "line %d is a second session header (pi's duplicate-header bug)", en.Line)
			}
			seenHeader = true
			continue
		}
		body = append(body, en)
	}
	r.Entries = len(body)
	verifyTree(r, body)
	r.OK = len(r.Problems) == 0
	byLine := func(fs []Finding) {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Line < fs[j].Line })
	}
	byLine(r.Problems)
	byLine(r.Notes)
	return r
}

// verifyTree checks ids and parent links as pi's index sees them.
func verifyTree(r *Report, body []*jsonl.Entry) {
	last := map[string]*jsonl.Entry{} // key -> the last entry with it (pi's byId)
	firstLine := map[string]int{}
	var order []string
	unknown := map[string][]int{}
	for _, en := range body {
		if en.IDKind != jsonl.KindString {
			what := "has no id"
			if en.IDKind != jsonl.KindAbsent {
				what = "has a non-string id " + jsonl.KeyString(en.ID)
			}
			r.problem("bad-id", en.Line, "", "the entry on line %d %s", en.Line, what)
		}
		k := tree.Key(en)
		if first, dup := firstLine[k]; dup {
			if en.IDKind == jsonl.KindString {
				r.problem("duplicate-id", en.Line, en.ID, "id %s on line %d is already used on line %d", human.Quote(en.ID), en.Line, first)
			}
		} else {
			firstLine[k] = en.Line
			order = append(order, k)
		}
		last[k] = en
		if !knownTypes[en.Type] {
			unknown[en.Type] = append(unknown[en.Type], en.Line)
		}
		if _, ok := jsonl.ParseDate(en.Timestamp); !ok {
			r.note("bad-timestamp", en.Line, idOf(en), "the entry on line %d has no valid timestamp", en.Line)
		}
	}
	types := make([]string, 0, len(unknown))
	for t := range unknown {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		lines := unknown[t]
		name := human.Quote(t)
		if t == "" {
			name = "(no type)"
		}
		r.note("unknown-type", lines[0], "", "%s of unknown type %s, first on line %d (pi keeps them in the tree)", human.Plural(len(lines), "entry", "entries"), name, lines[0])
	}

	// Parent links, from each id's last entry.
	parent := map[string]string{}
	for _, k := range order {
		en := last[k]
		switch en.ParentKind {
		case jsonl.KindNull:
			continue
		case jsonl.KindAbsent:
			r.problem("bad-parent", en.Line, idOf(en), "the entry on line %d has no parentId", en.Line)
			continue
		case jsonl.KindString:
		default:
			r.problem("bad-parent", en.Line, idOf(en), "the entry on line %d has a parentId that is not a string: %s", en.Line, jsonl.KeyString(en.ParentID))
			continue
		}
		p := en.ParentID
		switch {
		case p == k:
			r.problem("self-parent", en.Line, idOf(en), "the entry on line %d is its own parent", en.Line)
		case last[p] == nil:
			r.problem("missing-parent", en.Line, idOf(en), "the parent %s of the entry on line %d does not exist", human.Quote(p), en.Line)
		default:
			parent[k] = p
		}
	}
	for _, cyc := range findCycles(order, parent) {
		ids := make([]string, len(cyc))
		lines := make([]int, len(cyc))
		for i, k := range cyc {
			ids[i] = jsonl.KeyString(k)
			lines[i] = last[k].Line
		}
		first := slicesMinIndex(lines)
		r.problem("cycle", lines[first], ids[first], "the parent links of %d entries form a loop: %s", len(cyc), strings.Join(ids, " -> "))
	}

	// Labels and compactions that point nowhere.
	for _, en := range body {
		if en.Type == jsonl.TypeLabel {
			if t, ok := jsonl.String(field(en, "targetId")); ok && last[t] == nil {
				r.note("label-target", en.Line, idOf(en), "the label on line %d names entry %s, which does not exist", en.Line, human.Quote(t))
			}
		}
	}
}

func slicesMinIndex(a []int) int {
	m := 0
	for i := range a {
		if a[i] < a[m] {
			m = i
		}
	}
	return m
}

// idOf returns an entry's id for a Finding, "" when it has none.
func idOf(en *jsonl.Entry) string {
	if en.IDKind == jsonl.KindAbsent {
		return ""
	}
	return jsonl.KeyString(en.ID)
}

// findCycles returns the loops of a parent map (each node has at most one
// parent, so loops are disjoint), each listed child first from the node
// where the walk that found it entered it.
func findCycles(order []string, parent map[string]string) [][]string {
	const (
		unseen = iota
		onWalk
		done
	)
	state := make(map[string]uint8, len(order))
	var cycles [][]string
	for _, start := range order {
		if state[start] != unseen {
			continue
		}
		var walk []string
		pos := map[string]int{}
		cur := start
		for {
			st := state[cur]
			if st == done {
				break
			}
			if st == onWalk {
				cycles = append(cycles, append([]string(nil), walk[pos[cur]:]...))
				break
			}
			state[cur] = onWalk
			pos[cur] = len(walk)
			walk = append(walk, cur)
			p, ok := parent[cur]
			if !ok {
				break
			}
			cur = p
		}
		for _, k := range walk {
			state[k] = done
		}
	}
	return cycles
}

// ErrVerify is returned by Repair when its result does not pass Verify
// (a bug in Repair: nothing is written then).
var ErrVerify = errors.New("the file does not pass verify")

// NoteTempFiles adds a temp-file note to r for each of the temporary
// files an interrupted sessctl write of
// the session left beside it, looked for through fsys (nil means
// vfs.OS()).
func NoteTempFiles(fsys vfs.FS, r *Report, path string) {
	fsys = orOS(fsys)
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	temps, err := sessionfile.TempFiles(fsys, abs)
	if err != nil {
		return
	}
	for _, tmp := range temps {
		size := int64(0)
		if st, err := fsys.Lstat(tmp); err == nil {
			size = st.Size()
		}
		r.note("temp-file", 0, "", "%s (%s) was left by an interrupted sessctl write; the session's next write removes it",
			filepath.Base(tmp), human.Plural(int(size), "byte", "bytes"))
	}
}

// field returns a top-level member of an entry, nil when it has none.
func field(en *jsonl.Entry, key string) []byte {
	v, _ := en.Field(key)
	return v
}

// VerifyFile reads the session file at path, without a lock, and checks
// it as Verify does, noting the temporary files an interrupted sessctl
// write left beside it. It reads through fsys; nil means vfs.OS().
func VerifyFile(fsys vfs.FS, path string) (*Report, error) {
	fsys = orOS(fsys)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	r := Verify(path, data)
	NoteTempFiles(fsys, r, path)
	return r, nil
}
