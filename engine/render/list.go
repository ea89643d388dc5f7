package render

import (
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/migrate"
)

// List writes infos as the table of 'sessctl list': modification time
// (local), message count, short id and name or first message, one
// session a line; imports dated by their file are marked with a star and
// explained under the table. It writes nothing for no infos.
func List(w io.Writer, infos []engine.Info) error {
	if len(infos) == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	w = ew
	fmt.Fprintf(w, "%-16s  %5s  %-8s  %s\n", "MODIFIED", "MSGS", "ID", "NAME / FIRST MESSAGE")
	fileDates := false
	for i := range infos {
		in := &infos[i]
		title := in.FirstMessage
		if in.HasName && in.Name != "" {
			title = in.Name
		}
		mark := " "
		if migrate.ImportedDateFromFile(in.Path, in.IDString()) {
			mark, fileDates = "*", true
		}
		fmt.Fprintf(w, "%-16s%s %5d  %-8s  %s\n", in.Modified.Local().Format("2006-01-02 15:04"), mark,
			in.MessageCount, ShortID(in.IDString()), human.OneLine(title, 60))
	}
	if fileDates {
		fmt.Fprintf(w, "* %s\n", FileDateNote)
	}
	return ew.err
}

// ShortID is the first eight characters of a session id, as tables show
// it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// ListJSON returns infos as the JSON array of 'sessctl list --json', one element per line, as the
// pieces to write in order: the large part of each element is the info's own
// memory, not a copy. An import dated by its source file's modification
// time carries "dateFromFile": true after pi's members.
func ListJSON(infos []engine.Info) [][]byte {
	// Heads go into one buffer, whose growth would move them, so they are
	// recorded as bounds and sliced once it is complete.
	var heads []byte
	bounds := make([][2]int, len(infos))
	rests := make([][]byte, len(infos))
	for i := range infos {
		start := len(heads)
		if i > 0 {
			heads = append(heads, ',')
		} else {
			heads = append(heads, '[')
		}
		heads = append(heads, "\n  "...)
		heads, rests[i] = infos[i].AppendJSON(heads)
		bounds[i] = [2]int{start, len(heads)}
	}
	out := make([][]byte, 0, 3*len(infos)+1)
	for i := range infos {
		out = append(out, heads[bounds[i][0]:bounds[i][1]], rests[i])
		// An import dated by its source file's mtime says so in one more
		// member, after pi's.
		if r := rests[i]; len(r) > 0 && r[len(r)-1] == '}' && migrate.ImportedDateFromFile(infos[i].Path, infos[i].IDString()) {
			out[len(out)-1] = r[:len(r)-1]
			out = append(out, []byte(`,"dateFromFile":true}`))
		}
	}
	if len(infos) == 0 {
		return append(out, []byte("[]\n"))
	}
	return append(out, []byte("\n]\n"))
}
