package repair

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/human"
)

// Text is the note 'sessctl verify' prints for a leftover: a file of a
// write going on, or one a stopped writer left, with remedy (how to
// remove it, e.g. a command) after it.
func (l Leftover) Text(remedy string) string {
	if l.Held {
		return fmt.Sprintf("%s: note: a file of a write of %s that is going on (it has not written the session yet)", human.QuotePath(l.Path), human.QuotePath(filepath.Base(l.Session)))
	}
	return fmt.Sprintf("%s: note: leftover: left by a writer of %s that was stopped before it wrote it; %s", human.QuotePath(l.Path), human.QuotePath(filepath.Base(l.Session)), remedy)
}

// MarshalJSON encodes the leftover as {"leftover","session","held"},
// as 'sessctl verify --json' prints it (<, > and & unescaped).
func (l Leftover) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Leftover string `json:"leftover"`
		Session  string `json:"session"`
		Held     bool   `json:"held"`
	}{l.Path, l.Session, l.Held})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// WriteCleared writes what ClearLeftovers removed below root for
// people: a line per file removed, or that there were none.
func WriteCleared(w io.Writer, root string, removed []string) error {
	ew := &errWriter{w: w}
	for _, p := range removed {
		fmt.Fprintf(ew, "removed %s\n", human.QuotePath(p))
	}
	if len(removed) == 0 {
		fmt.Fprintf(ew, "no leftovers below %s\n", human.QuotePath(root))
	}
	return ew.err
}

// errWriter remembers the first error of the writes through it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
