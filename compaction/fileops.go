package compaction

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// FileOps collects the files a conversation touched, by the tool that
// touched them (pi's FileOperations). The zero value is empty and ready.
type FileOps struct {
	Read    map[string]bool
	Written map[string]bool
	Edited  map[string]bool
}

func addTo(m *map[string]bool, path string) {
	if *m == nil {
		*m = make(map[string]bool)
	}
	(*m)[path] = true
}

// AddMessage records the file operations of one message
// (extractFileOpsFromMessage): in an assistant message each toolCall
// block, in a tool result each call of its nestedCalls.calls (the calls a
// codemode script made, pi 1.x), named exactly "read", "write" or "edit"
// whose arguments.path is a non-empty string. Paths are kept exactly as
// the model wrote them. Other tools, other argument names and other
// messages are ignored.
func (f *FileOps) AddMessage(msg []byte) {
	c := fields(msg, "role", "content", "nestedCalls")
	switch role, _ := jsonl.String(c[0]); role {
	case "toolResult":
		calls, _ := jsonl.Lookup(c[2], "calls")
		eachElem(calls, func(b []byte) {
			bf := fields(b, "name", "arguments")
			f.add(bf[0], bf[1])
		})
	case "assistant":
		eachElem(c[1], func(b []byte) {
			bf := fields(b, "type", "name", "arguments")
			if t, _ := jsonl.String(bf[0]); t != "toolCall" || bf[1] == nil {
				return
			}
			f.add(bf[1], bf[2])
		})
	}
}

// add is pi's addFileOp: a read, write or edit call with a path.
func (f *FileOps) add(name, args []byte) {
	path, _ := jsonl.String(fields(args, "path")[0])
	if path == "" {
		return
	}
	switch n, _ := jsonl.String(name); n {
	case "read":
		addTo(&f.Read, path)
	case "write":
		addTo(&f.Written, path)
	case "edit":
		addTo(&f.Edited, path)
	}
}

// addDetails carries over the file lists of an earlier compaction or
// branch summary's details: readFiles into Read, modifiedFiles into Edited.
// Non-array members are ignored, and so are non-string elements.
func (f *FileOps) addDetails(details []byte) {
	d := fields(details, "readFiles", "modifiedFiles")
	eachElem(d[0], func(v []byte) {
		if s, ok := jsonl.String(v); ok {
			addTo(&f.Read, s)
		}
	})
	eachElem(d[1], func(v []byte) {
		if s, ok := jsonl.String(v); ok {
			addTo(&f.Edited, s)
		}
	})
}

// FileLists are the file lists pi stores in a compaction's or branch
// summary's details and appends to its summary.
// They encode (MarshalJSON, and encoding/json through the tags) with
// pi's keys, readFiles and modifiedFiles, so a FileLists can be passed as
// the Details of engine.Compaction as it is.
type FileLists struct {
	// ReadFiles were read and not modified.
	ReadFiles []string `json:"readFiles"`
	// ModifiedFiles were edited or written.
	ModifiedFiles []string `json:"modifiedFiles"`
}

// Lists computes the file lists (computeFileLists): modified = edited ∪
// written, read = read − modified, each sorted as JavaScript's default sort
// does (by UTF-16 code units). Both are non-nil.
func (f *FileOps) Lists() FileLists {
	modified := make([]string, 0, len(f.Edited)+len(f.Written))
	isMod := make(map[string]bool, len(f.Edited)+len(f.Written))
	for _, m := range []map[string]bool{f.Edited, f.Written} {
		for p := range m {
			if !isMod[p] {
				isMod[p] = true
				modified = append(modified, p)
			}
		}
	}
	read := make([]string, 0, len(f.Read))
	for p := range f.Read {
		if !isMod[p] {
			read = append(read, p)
		}
	}
	slices.SortFunc(read, CompareUTF16)
	slices.SortFunc(modified, CompareUTF16)
	return FileLists{ReadFiles: read, ModifiedFiles: modified}
}

// Suffix is pi's formatFileOperations: "" when both lists are empty,
// otherwise "\n\n" and the non-empty sections, read files first, joined by
// a blank line: "<read-files>\n...\n</read-files>" and
// "<modified-files>\n...\n</modified-files>".
func (l FileLists) Suffix() string {
	var sections []string
	if len(l.ReadFiles) > 0 {
		sections = append(sections, "<read-files>\n"+strings.Join(l.ReadFiles, "\n")+"\n</read-files>")
	}
	if len(l.ModifiedFiles) > 0 {
		sections = append(sections, "<modified-files>\n"+strings.Join(l.ModifiedFiles, "\n")+"\n</modified-files>")
	}
	if len(sections) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(sections, "\n\n")
}

// JSON returns the details object pi stores:
// {"readFiles":[...],"modifiedFiles":[...]}, both keys always present.
func (l FileLists) JSON() []byte {
	return l.appendJSON(nil)
}

// MarshalJSON returns JSON(): nil lists are written as [], as pi writes
// them.
func (l FileLists) MarshalJSON() ([]byte, error) { return l.JSON(), nil }

func (l FileLists) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"readFiles":`...)
	buf = appendStrings(buf, l.ReadFiles)
	buf = append(buf, `,"modifiedFiles":`...)
	buf = appendStrings(buf, l.ModifiedFiles)
	return append(buf, '}')
}

func appendStrings(buf []byte, ss []string) []byte {
	buf = append(buf, '[')
	for i, s := range ss {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = jsonl.AppendString(buf, s)
	}
	return append(buf, ']')
}

// CompareUTF16 compares two strings by their UTF-16 code units, the order
// of JavaScript's default sort. It differs from Go's byte order only
// between characters in U+E000–U+FFFF and characters above U+FFFF.
func CompareUTF16(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			for k := range 2 {
				if ua[k] != ub[k] {
					if ua[k] < ub[k] {
						return -1
					}
					return 1
				}
			}
			return 0 // unreachable: different runes have different units
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case len(a) == len(b):
		return 0
	case len(a) == 0:
		return -1
	}
	return 1
}

// utf16Units returns the UTF-16 units of r; the second is 0 for a BMP
// character (which then compares before any low surrogate, and a BMP
// character never shares its first unit with a surrogate pair).
func utf16Units(r rune) [2]uint16 {
	if r <= 0xFFFF {
		return [2]uint16{uint16(r), 0}
	}
	r -= 0x10000
	return [2]uint16{uint16(0xD800 + (r >> 10)), uint16(0xDC00 + (r & 0x3FF))}
}
