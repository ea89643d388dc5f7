package repair

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
)

// Result is what Repair changed in a file. Output is the file File wrote,
// nil when it wrote none; Changed is set when it wrote one. Entries counts
// the entries kept, Dropped the lines dropped; Changes lists each change,
// in the order of the lines of the original file.
type Result struct {
	Path    string    `json:"path"`
	Output  *string   `json:"output"`
	Changed bool      `json:"changed"`
	Entries int       `json:"entries"`
	Dropped int       `json:"dropped"`
	Changes []Finding `json:"changes"`
}

// change records a change.
func (r *Result) change(kind string, line int, id, format string, a ...any) {
	r.Changes = append(r.Changes, Finding{Kind: kind, Line: line, ID: id, Message: fmt.Sprintf(format, a...)})
}

// droppedEnvelope reads the id and parentId of a damaged line, which pi
// writes before the rest of the entry.
var droppedEnvelope = regexp.MustCompile(`"id":"((?:[^"\\]|\\.)*)","parentId":(null|"(?:[^"\\]|\\.)*")`)

// rentry is an entry being repaired: its bytes change, its line does not.
type rentry struct {
	raw  []byte
	line int
	id   string
}

// Repair returns the bytes of a valid session file salvaged from data, the
// damaged contents of the file at path, and what it changed. It keeps
// every entry that can be read, in the steps the package documentation
// lists; now is the time of a header it has to make up when nothing in
// data gives one. It fails with an *engine.VersionError (ErrUnsupportedVersion)
// for a version above 3, which it cannot know the meaning of. Repair does
// not check its result: File does, with Verify.
func Repair(path string, data []byte, now time.Time) ([]byte, *Result, error) {
	res := &Result{Path: path, Changes: []Finding{}}
	out, err := repairData(path, data, res, now)
	if err != nil {
		return nil, nil, err
	}
	return out, res, nil
}

// repairData returns the repaired file; it records what it changed in res.
// It runs the steps the package documentation lists, one method each.
func repairData(path string, data []byte, res *Result, now time.Time) ([]byte, error) {
	rp := &repairer{path: path, data: data, res: res, now: now}
	rp.dropLines()
	rp.placeHeader()
	if err := rp.checkVersion(); err != nil {
		return nil, err
	}
	rp.assignIDs()
	if err := rp.updateReferences(); err != nil {
		return nil, err
	}
	rp.fixParents()
	return rp.file(), nil
}

// occurrence is one kept copy of an original id: its position in kept and
// the id it has there.
type occurrence struct {
	pos int // position in kept of the copy
	id  string
}

// repairer holds what the steps of repairData pass on to the next.
type repairer struct {
	path string
	data []byte
	res  *Result
	now  time.Time

	dropParent map[string]*string // id of a dropped line -> its parent (nil: a root)
	entries    []jsonl.Entry      // the entries read, in file order
	header     []byte
	body       []jsonl.Entry
	taken      map[string]bool
	occ        map[string][]occurrence // original key -> its copies
	kept       []*rentry

	pos          map[string]int // id -> position in kept
	parent       []int          // position of the parent, -1 for a root
	firstForward int
}

// readDropped records the id and parent of a dropped line whose envelope
// survived.
func (rp *repairer) readDropped(b []byte) {
	if m := droppedEnvelope.FindSubmatch(b); m != nil {
		id, ok1 := jsonl.String(append(append([]byte{'"'}, m[1]...), '"'))
		if !ok1 {
			return
		}
		if string(m[2]) == "null" {
			rp.dropParent[id] = nil
		} else if par, ok := jsonl.String(m[2]); ok {
			rp.dropParent[id] = &par
		}
	}
}

// dropLines is step 1, the lines that cannot be kept: it salvages the
// entries glued in a damaged line and drops the rest, and the torn tail.
func (rp *repairer) dropLines() {
	data, res := rp.data, rp.res
	p := jsonl.ParseFile(data)
	rp.dropParent = map[string]*string{}
	entries := append([]jsonl.Entry(nil), p.Entries...)
	salvaged := false
	for _, bad := range p.Malformed {
		line := data[bad.Offset : bad.Offset+int64(bad.Bytes)]
		rp.readDropped(line)
		objs, rest := salvageGlued(line)
		for _, o := range objs {
			o.en.Line, o.en.Offset = bad.Line, bad.Offset+int64(o.at)
			entries = append(entries, o.en)
			salvaged = true
		}
		if len(objs) > 0 {
			if rest == 0 {
				res.change("split-line", bad.Line, "", "split a line of %d entries glued together", len(objs))
			} else {
				res.change("split-line", bad.Line, "", "kept %s found whole in a damaged line, dropped the other %s", human.Plural(len(objs), "entry", "entries"), human.Plural(rest, "byte", "bytes"))
			}
			if rest > 0 {
				res.Dropped++
			}
			continue
		}
		res.Dropped++
		res.change("dropped-line", bad.Line, "", "dropped a line that is not a JSON object (%s)", human.CutRunes(strings.TrimSpace(string(line)), 40))
	}
	if salvaged {
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].Offset < entries[j].Offset })
	}
	switch p.Tail {
	case jsonl.TailTorn:
		rp.readDropped(data[p.TailOffset:])
		res.Dropped++
		res.change("cut-torn-tail", p.Lines, "", "cut off an unfinished last line (%s)", human.Plural(int(p.Size-p.TailOffset), "byte", "bytes"))
	case jsonl.TailNoNewline:
		res.change("added-newline", p.Lines, "", "added the missing newline after the last line")
	}
	rp.entries = entries
}

// placeHeader is step 2, the header: the first session header goes to the
// top (or one is made up), the other headers are dropped.
func (rp *repairer) placeHeader() {
	entries, res := rp.entries, rp.res
	hdrAt := -1
	for i := range entries {
		if entries[i].IsHeader() && entries[i].IDKind == jsonl.KindString {
			hdrAt = i
			break
		}
	}
	var header []byte
	var body []jsonl.Entry
	switch {
	case hdrAt == 0:
		header = entries[0].Raw
	case hdrAt > 0:
		header = entries[hdrAt].Raw
		res.change("moved-header", entries[hdrAt].Line, "", "moved the session header to the top, above %s", human.Plural(hdrAt, "line", "lines"))
	default:
		header = makeHeader(rp.path, rp.data, entries, rp.now)
		h, _ := jsonl.ParseEntry(header)
		res.change("added-header", 0, h.ID, "added a session header with id %s", human.Quote(h.ID))
	}
	for i := range entries {
		if i == hdrAt {
			continue
		}
		if entries[i].IsHeader() {
			res.Dropped++
			res.change("dropped-header", entries[i].Line, "", "dropped an extra session header")
			continue
		}
		body = append(body, entries[i])
	}
	rp.header, rp.body = header, body
}

// checkVersion is step 3, the version: it refuses a version it cannot know
// the meaning of and migrates an older one.
func (rp *repairer) checkVersion() error {
	hentry, err := jsonl.ParseEntry(rp.header)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	v := migrate.VersionOf(&hentry)
	if math.IsNaN(v) || v > jsonl.CurrentVersion {
		return &engine.VersionError{Path: rp.path, Found: v, Max: jsonl.CurrentVersion}
	}
	if migrate.Needed(v) {
		all := append([]jsonl.Entry{hentry}, rp.body...)
		m, _, err := migrate.Entries(all)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		rp.header, rp.body = m[0].Raw, m[1:]
		rp.res.change("migrated", 0, "", "migrated from version %v to %d", v, jsonl.CurrentVersion)
	}
	return nil
}

// newID returns an id no entry has, made from seed and line, and takes it.
func (rp *repairer) newID(seed string, line int) string {
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(seed + "\x00" + strconv.Itoa(line) + "\x00" + strconv.Itoa(n)))
		id := hex.EncodeToString(sum[:4])
		if !rp.taken[id] {
			rp.taken[id] = true
			return id
		}
	}
}

// assignIDs is step 4, ids: every entry gets a unique string id; an exact
// copy of an earlier line is dropped, another use of an id renamed.
func (rp *repairer) assignIDs() {
	body, res := rp.body, rp.res
	rp.taken = map[string]bool{}
	for i := range body {
		if body[i].IDKind == jsonl.KindString {
			rp.taken[body[i].ID] = true
		}
	}
	for id := range rp.dropParent {
		rp.taken[id] = true
	}
	occ := map[string][]occurrence{} // original key -> its copies
	var kept []*rentry
	firstRaw := map[string][][]byte{}
	for i := range body {
		en := &body[i]
		key := en.ID // a non-string id is "\x00" + its JSON text
		re := &rentry{raw: en.Raw, line: en.Line, id: en.ID}
		switch {
		case en.IDKind == jsonl.KindAbsent:
			re.id = rp.newID("", en.Line)
			re.raw = setMember(re.raw, "id", jsonl.AppendString(nil, re.id), "type")
			res.change("added-id", en.Line, re.id, "gave the entry without an id the id %s", human.Quote(re.id))
			kept = append(kept, re)
			continue
		case en.IDKind != jsonl.KindString:
			re.id = rp.newID(key, en.Line)
			re.raw = setMember(re.raw, "id", jsonl.AppendString(nil, re.id), "type")
			res.change("added-id", en.Line, re.id, "replaced the non-string id %s with %s", jsonl.KeyString(key), human.Quote(re.id))
		case len(occ[key]) > 0:
			exact := false
			for _, r := range firstRaw[key] {
				exact = exact || string(r) == string(en.Raw)
			}
			if exact {
				last := occ[key][len(occ[key])-1]
				occ[key] = append(occ[key], occurrence{pos: len(kept), id: last.id})
				res.Dropped++
				res.change("dropped-duplicate", en.Line, en.ID, "dropped an exact copy of an earlier line with id %s", human.Quote(en.ID))
				continue
			}
			re.id = rp.newID(key, en.Line)
			re.raw = setMember(re.raw, "id", jsonl.AppendString(nil, re.id), "type")
			res.change("renamed-duplicate", en.Line, re.id, "renamed the second use of id %s to %s", human.Quote(en.ID), human.Quote(re.id))
		}
		firstRaw[key] = append(firstRaw[key], en.Raw)
		occ[key] = append(occ[key], occurrence{pos: len(kept), id: re.id})
		kept = append(kept, re)
	}
	rp.occ, rp.kept = occ, kept
}

// resolve returns the id of the copy of key written last before pos (the
// first copy when none is), and whether key has a copy at all.
func (rp *repairer) resolve(key string, pos int) (string, bool) {
	list := rp.occ[key]
	if len(list) == 0 {
		return "", false
	}
	best := list[0].id
	for _, o := range list {
		if o.pos < pos {
			best = o.id
		}
	}
	return best, true
}

// updateReferences is step 5: references to shared ids go to the copy
// written last before them.
func (rp *repairer) updateReferences() error {
	res := rp.res
	refs := map[string][]string{jsonl.TypeLabel: {"targetId"}, jsonl.TypeCompaction: {"firstKeptEntryId"}, jsonl.TypeBranchSummary: {"fromId"}}
	for pos, re := range rp.kept {
		en, err := jsonl.ParseEntry(re.raw)
		if err != nil {
			return err
		}
		if en.ParentKind != jsonl.KindNull && en.ParentKind != jsonl.KindAbsent {
			if to, ok := rp.resolve(en.ParentID, pos); ok && (to != en.ParentID || en.ParentKind != jsonl.KindString) {
				re.raw = setMember(re.raw, "parentId", jsonl.AppendString(nil, to), "id")
				res.change("updated-reference", re.line, re.id, "parentId %s now names %s", jsonl.KeyString(string(parentJSON(&en))), human.Quote(to))
			}
		}
		for _, k := range refs[en.Type] {
			v, ok := en.Field(k)
			if !ok {
				continue
			}
			key, isStr := jsonl.String(v)
			if !isStr {
				key = "\x00" + string(v)
			}
			if to, ok := rp.resolve(key, pos); ok && to != key {
				re.raw = setMember(re.raw, k, jsonl.AppendString(nil, to), "")
				res.change("updated-reference", re.line, re.id, "%s %s now names %s", k, v, human.Quote(to))
			}
		}
	}
	return nil
}

// fixParents is step 6, parents: every entry hangs from an earlier-written
// entry that exists, or is a root, and no loop remains.
func (rp *repairer) fixParents() {
	rp.indexParents()
	rp.reattach()
	rp.cutLoops()
}

// indexParents records where each kept entry's parent is: its position,
// -1 for a root, -2 for a parent that does not exist, -3 for none usable.
func (rp *repairer) indexParents() {
	kept := rp.kept
	pos := make(map[string]int, len(kept))
	for i, re := range kept {
		pos[re.id] = i
	}
	parent := make([]int, len(kept)) // position of the parent, -1 for a root
	for i, re := range kept {
		en, _ := jsonl.ParseEntry(re.raw)
		parent[i] = -1
		switch en.ParentKind {
		case jsonl.KindNull:
		case jsonl.KindString:
			if j, ok := pos[en.ParentID]; ok {
				parent[i] = j
			} else {
				parent[i] = -2 // missing
			}
		default:
			parent[i] = -3 // absent or not a string
		}
	}
	// Without forward references (a parent written after its child, as
	// pi never writes) below i, the entry before i cannot lead back to it.
	firstForward := len(kept)
	for i, p := range parent {
		if p > i {
			firstForward = i
			break
		}
	}
	rp.pos, rp.parent, rp.firstForward = pos, parent, firstForward
}

// reaches reports whether following parents from j arrives at i.
func (rp *repairer) reaches(j, i int) bool {
	seen := map[int]bool{}
	for j >= 0 && !seen[j] {
		if j == i {
			return true
		}
		seen[j] = true
		j = rp.parent[j]
	}
	return false
}

// attach picks the parent for entry i: the latest entry before it that
// does not lead back to it, or none.
func (rp *repairer) attach(i int) int {
	if i <= rp.firstForward {
		return i - 1
	}
	for j := i - 1; j >= 0; j-- {
		if rp.parent[j] < 0 && rp.parent[j] != -1 {
			continue // not settled yet; it may still move
		}
		if !rp.reaches(j, i) {
			return j
		}
	}
	return -1
}

// setParent makes entry j (none when j < 0) the parent of entry i and
// records why.
func (rp *repairer) setParent(i, j int, why string) {
	rp.parent[i] = j
	re := rp.kept[i]
	if j < 0 {
		re.raw = setMember(re.raw, "parentId", []byte("null"), "id")
		rp.res.change("reparented", re.line, re.id, "%s; it is now a root", why)
		return
	}
	re.raw = setMember(re.raw, "parentId", jsonl.AppendString(nil, rp.kept[j].id), "id")
	rp.res.change("reparented", re.line, re.id, "%s; it now hangs from %s (line %d)", why, human.Quote(rp.kept[j].id), rp.kept[j].line)
}

// reattach gives a parent to each entry whose parent is missing, unusable
// or itself: the one a chain of dropped lines leads to, or attach's.
func (rp *repairer) reattach() {
	pos, parent, dropParent := rp.pos, rp.parent, rp.dropParent
	for i, re := range rp.kept {
		en, _ := jsonl.ParseEntry(re.raw)
		switch {
		case parent[i] == -3:
			rp.setParent(i, rp.attach(i), "the entry had no usable parentId")
		case parent[i] == -2:
			// Follow dropped lines whose envelope survived.
			p := en.ParentID
			hops := 0
			for {
				if _, ok := pos[p]; ok || hops > len(dropParent) {
					break
				}
				next, ok := dropParent[p]
				if !ok {
					break
				}
				hops++
				if next == nil {
					p = ""
					break
				}
				p = *next
			}
			switch j, ok := pos[p]; {
			case hops > 0 && p == "":
				rp.setParent(i, -1, fmt.Sprintf("parent %s was a dropped root line", human.Quote(en.ParentID)))
			case hops > 0 && ok && !rp.reaches(j, i):
				rp.setParent(i, j, fmt.Sprintf("parent %s was a dropped line", human.Quote(en.ParentID)))
			default:
				rp.setParent(i, rp.attach(i), fmt.Sprintf("parent %s does not exist", human.Quote(en.ParentID)))
			}
		case parent[i] == i:
			rp.setParent(i, rp.attach(i), "the entry was its own parent")
		}
	}
}

// cutLoops breaks each parent loop left at its earliest-written entry,
// until none remains.
func (rp *repairer) cutLoops() {
	kept, parent := rp.kept, rp.parent
	for {
		order := make([]string, len(kept))
		links := map[string]string{}
		for i := range kept {
			order[i] = strconv.Itoa(i)
			if parent[i] >= 0 {
				links[order[i]] = strconv.Itoa(parent[i])
			}
		}
		cycles := findCycles(order, links)
		if len(cycles) == 0 {
			break
		}
		for _, c := range cycles {
			first := math.MaxInt
			for _, k := range c {
				n, _ := strconv.Atoi(k)
				first = min(first, n)
			}
			parent[first] = -1 // cut the loop before choosing
			rp.setParent(first, rp.attach(first), fmt.Sprintf("the entry was on a parent loop of %d entries", len(c)))
		}
	}
}

// file is step 7, the file: the header, then the kept entries, one a line.
func (rp *repairer) file() []byte {
	var out []byte
	out = append(out, rp.header...)
	out = append(out, '\n')
	for _, re := range rp.kept {
		out = append(out, re.raw...)
		out = append(out, '\n')
	}
	rp.res.Entries = len(rp.kept)
	sort.SliceStable(rp.res.Changes, func(i, j int) bool { return rp.res.Changes[i].Line < rp.res.Changes[j].Line })
	return out
}

// uuidFrom makes a version 4 shaped UUID from a hash of data, so that
// repairing the same bytes twice gives the same session id.
func uuidFrom(data []byte) string {
	sum := sha256.Sum256(data)
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// glued is an entry found whole inside a damaged line, at byte at.
type glued struct {
	en jsonl.Entry
	at int
}

// entryStart is how every line pi writes begins.
var entryStart = []byte(`{"type":"`)

// salvageGlued finds the entries that are whole inside a damaged line: pi
// glues its next entry onto a last line that lacks its newline, and an
// interrupted write leaves a fragment before or after whole entries. Only
// objects that start like a pi line and have an id and a parentId (or are
// headers) count, so a content block inside a cut-off entry is not taken
// for an entry. rest is the number of bytes left over.
func salvageGlued(line []byte) (found []glued, rest int) {
	rest = len(line)
	i := jsonl.SkipWS(line, 0)
	for i < len(line) {
		if line[i] == '{' {
			if end, err := jsonl.SkipValue(line, i); err == nil {
				if en, err := jsonl.ParseEntry(line[i:end]); err == nil &&
					(en.IsHeader() || en.IDKind == jsonl.KindString && en.ParentKind != jsonl.KindAbsent) {
					found = append(found, glued{en: en, at: i})
					rest -= end - i
					i = jsonl.SkipWS(line, end)
					continue
				}
			}
		}
		next := bytes.Index(line[i+1:], entryStart)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if len(found) == 0 {
		return nil, len(line)
	}
	return found, rest
}

// parentJSON returns the raw parentId of an entry.
func parentJSON(en *jsonl.Entry) []byte {
	b, _ := en.ParentJSON()
	return b
}

// makeHeader builds a header for a file that has none with a string id.
func makeHeader(path string, data []byte, entries []jsonl.Entry, now time.Time) []byte {
	var bad *jsonl.Entry // a header whose id is not a string
	for i := range entries {
		if entries[i].IsHeader() {
			bad = &entries[i]
			break
		}
	}
	name := filepath.Base(path)
	id := ""
	ts := ""
	cwd := ""
	var parentSession *string
	if bad != nil {
		h := jsonl.ParseHeader(*bad)
		if v, ok := bad.Field("id"); ok && jsonl.KindOf(v) == jsonl.KindNumber {
			id = string(v)
		}
		if _, ok := jsonl.ParseDate(bad.Timestamp); ok {
			ts = bad.Timestamp
		}
		cwd = h.Cwd
		if h.HasParentSession {
			parentSession = &h.ParentSession
		}
	}
	if id == "" || layout.CheckName(id) != nil {
		id = sessionfile.IDFromFileName(name)
	}
	if ts == "" {
		if len(name) > 24 && name[24] == '_' {
			// 2026-03-01T09-00-00-123Z -> 2026-03-01T09:00:00.123Z
			n := []byte(name[:24])
			n[13], n[16], n[19] = ':', ':', '.'
			if _, ok := jsonl.ParseDate(string(n)); ok {
				ts = string(n)
			}
		}
	}
	if ts == "" {
		for i := range entries {
			if _, ok := jsonl.ParseDate(entries[i].Timestamp); ok {
				ts = entries[i].Timestamp
				break
			}
		}
	}
	if id == "" {
		id = uuidFrom(data)
	}
	b := jsonl.NewObject(160).
		String("type", jsonl.TypeSession).
		Number("version", jsonl.CurrentVersion).
		String("id", id)
	if ts != "" {
		b.String("timestamp", ts)
	} else {
		b.String("timestamp", jsonl.ISOTime(now))
	}
	b.String("cwd", cwd)
	if parentSession != nil {
		b.String("parentSession", *parentSession)
	}
	return b.Bytes()
}

// setMember sets key to the JSON value val in the object raw: it replaces
// the value of the last member with that key (JSON.parse's view), or adds
// the member after the member named after (or at the end).
func setMember(raw []byte, key string, val []byte, after string) []byte {
	valStart, valEnd := -1, -1
	insertAt := -1
	_ = jsonl.Members(raw, func(m *jsonl.Member) bool {
		if m.KeyIs(key) {
			valStart, valEnd = m.ValStart, m.ValStart+len(m.Value)
		}
		if after != "" && m.KeyIs(after) {
			insertAt = m.ValStart + len(m.Value)
		}
		return true
	})
	var out []byte
	if valStart >= 0 {
		out = append(out, raw[:valStart]...)
		out = append(out, val...)
		return append(out, raw[valEnd:]...)
	}
	member := append(jsonl.AppendString([]byte{','}, key), ':')
	member = append(member, val...)
	if insertAt < 0 {
		end := len(raw) - 1 // the closing brace
		for end > 0 && raw[end] != '}' {
			end--
		}
		if string(raw[:end]) == "{" || jsonl.SkipWS(raw, 1) == end {
			member = member[1:] // an empty object: no comma
		}
		insertAt = end
	}
	out = append(out, raw[:insertAt]...)
	out = append(out, member...)
	return append(out, raw[insertAt:]...)
}
