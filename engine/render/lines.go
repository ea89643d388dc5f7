package render

import (
	"io"
	"iter"

	"github.com/sessctl/sessctl/engine"
)

// StoredLines writes the header line and the lines of a branch as they
// are stored, one a line (JSONL), as 'sessctl show --json' prints them.
// lines reads the branch's lines (engine.View.Lines); its first error
// ends the output and is returned, as is a write error.
func StoredLines(w io.Writer, header []byte, lines iter.Seq2[*engine.Entry, error]) error {
	ew := &errWriter{w: w}
	ew.Write(header)
	ew.Write([]byte{'\n'})
	for en, err := range lines {
		if err != nil {
			return err
		}
		ew.Write(en.Raw)
		ew.Write([]byte{'\n'})
	}
	return ew.err
}
