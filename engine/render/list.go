package render

import (
	"fmt"
	"io"
	"iter"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/migrate"
)

// List writes infos as the table of 'sessctl list': modification time
// (local), message count, short id and name or first message, one
// session a line; imports dated by their file are marked with a star and
// explained under the table. It writes nothing for no infos. The short
// id is the shortest prefix of at least eight characters that no other
// session of infos shares (as git shortens object names): ListIn
// shortens them among a whole store's sessions.
func List(w io.Writer, infos []engine.Info) error {
	return ListIn(w, infos, infos)
}

// ListIn is List with short ids that no session of store shares (a
// listing of every cwd of the store infos come from, without texts), so
// that each is a name engine.Store.Resolve finds. The ids of infos are
// shortened among store's and their own.
func ListIn(w io.Writer, infos, store []engine.Info) error {
	if len(infos) == 0 {
		return nil
	}
	var ids shortid.Set
	for _, in := range [][]engine.Info{store, infos} {
		for i := range in {
			ids.Add(in[i].Path, in[i].ID)
		}
	}
	// The names start in one column, after the longest short id.
	short, width := make([]string, len(infos)), shortid.MinLen
	for i := range infos {
		short[i] = human.QuotePath(ids.Short(infos[i].ID))
		width = max(width, len(short[i]))
	}
	ew := &errWriter{w: w}
	w = ew
	fmt.Fprintf(w, "%-16s  %5s  %-*s  %s\n", "MODIFIED", "MSGS", width, "ID", "NAME / FIRST MESSAGE")
	fileDates := false
	for i := range infos {
		in := &infos[i]
		// A name is quoted when it is not plain text, a first message
		// when it is not once its whitespace is folded: no newline or
		// escape sequence of a session (or of a hostile remote) is
		// printed as it is.
		title := human.OneLineText(in.FirstMessage, 60)
		if in.HasName && in.Name != "" {
			title = human.OneLineName(in.Name, 60)
		}
		mark := " "
		if migrate.ImportedDateFromFile(in.Path, in.ID) {
			mark, fileDates = "*", true
		}
		fmt.Fprintf(w, "%-16s%s %5d  %-*s  %s\n", in.Modified.Local().Format("2006-01-02 15:04"), mark,
			in.MessageCount, width, short[i], title)
	}
	if fileDates {
		fmt.Fprintf(w, "* %s\n", FileDateNote)
	}
	return ew.err
}

// ShortID is the first eight characters of a session id: the shortest
// short id List shows, unique only where no other session was started
// within the same minute or so (a UUIDv7's first eight digits).
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// ListJSON returns infos as the JSON array of 'sessctl list --json', one element per line, as the
// pieces to write in order. An import dated by its source file's
// modification time carries "dateFromFile": true after pi's members.
// ListJSONChunks gives the same pieces a part at a time.
func ListJSON(infos []engine.Info) [][]byte {
	var out [][]byte
	for part := range ListJSONChunks(infos) {
		out = append(out, part...)
	}
	return out
}

// listJSONChunk is the number of infos of a ListJSONChunks part.
const listJSONChunk = 1000

// ListJSONChunks yields the pieces of ListJSON(infos) in parts of a
// thousand infos, so that a writer holds one part's encoding at a time;
// each part's pieces may be reused once the next is asked for.
func ListJSONChunks(infos []engine.Info) iter.Seq[[][]byte] {
	return func(yield func([][]byte) bool) {
		if len(infos) == 0 {
			yield([][]byte{[]byte("[]\n")})
			return
		}
		for lo := 0; lo < len(infos); lo += listJSONChunk {
			hi := min(lo+listJSONChunk, len(infos))
			// Heads go into one buffer, whose growth would move them, so
			// they are recorded as bounds and sliced once it is complete.
			var heads []byte
			bounds := make([][2]int, hi-lo)
			rests := make([][]byte, hi-lo)
			for i := lo; i < hi; i++ {
				start := len(heads)
				if i > 0 {
					heads = append(heads, ',')
				} else {
					heads = append(heads, '[')
				}
				heads = append(heads, "\n  "...)
				heads, rests[i-lo] = infos[i].AppendJSON(heads)
				bounds[i-lo] = [2]int{start, len(heads)}
			}
			out := make([][]byte, 0, 3*(hi-lo)+1)
			for i := lo; i < hi; i++ {
				b := bounds[i-lo]
				out = append(out, heads[b[0]:b[1]], rests[i-lo])
				// An import dated by its source file's mtime says so in one
				// more member, after pi's.
				if r := rests[i-lo]; len(r) > 0 && r[len(r)-1] == '}' && migrate.ImportedDateFromFile(infos[i].Path, infos[i].ID) {
					out[len(out)-1] = r[:len(r)-1]
					out = append(out, []byte(`,"dateFromFile":true}`))
				}
			}
			if hi == len(infos) {
				out = append(out, []byte("\n]\n"))
			}
			if !yield(out) {
				return
			}
		}
	}
}

// listJSONPart is about how many bytes ListJSONSeq gathers before it
// yields them.
const listJSONPart = 256 << 10

// ListJSONSeq yields the pieces of ListJSON for the infos seq gives, in
// its order, a few hundred kilobytes at a time (or one info, when it is
// larger), encoded into one buffer that is reused: a writer holds about
// one info's text at a time when seq reads them one at a time, as
// engine.Store.ListTexts does, and an info is done with before seq gives
// the next. An error from seq is passed to skip, and the iteration goes
// on; stopping it stops seq. The pieces are reused once the next are
// asked for.
func ListJSONSeq(seq iter.Seq2[*engine.Info, error], skip func(error)) iter.Seq[[][]byte] {
	return ListPlacesJSONSeq(seq, nil, skip)
}

// ListPlacesJSONSeq is ListJSONSeq with the AgentUse sessions aus added
// at the end of the array, each as AgentUseListJSON writes it (with
// "dir" in place of "path"): the JSON of 'sessctl list --store DIR'.
func ListPlacesJSONSeq(seq iter.Seq2[*engine.Info, error], aus []*agentuse.Info, skip func(error)) iter.Seq[[][]byte] {
	return func(yield func([][]byte) bool) {
		var buf []byte
		n := 0
		for in, err := range seq {
			if err != nil {
				skip(err)
				continue
			}
			if n == 0 {
				buf = append(buf, "[\n  "...)
			} else {
				buf = append(buf, ",\n  "...)
			}
			n++
			buf = in.AppendJSONElement(buf)
			// An import dated by its source file's mtime says so in one
			// more member, after pi's.
			if migrate.ImportedDateFromFile(in.Path, in.ID) {
				buf = append(buf[:len(buf)-1], `,"dateFromFile":true}`...)
			}
			if len(buf) >= listJSONPart {
				if !yield([][]byte{buf}) {
					return
				}
				buf = buf[:0]
			}
		}
		for _, x := range aus {
			if n == 0 {
				buf = append(buf, "[\n  "...)
			} else {
				buf = append(buf, ",\n  "...)
			}
			n++
			buf = append(buf, agentUseInfoJSON(x)...)
		}
		if n == 0 {
			yield([][]byte{[]byte("[]\n")})
			return
		}
		yield([][]byte{append(buf, "\n]\n"...)})
	}
}
