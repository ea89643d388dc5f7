package term

import (
	"io"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
)

// Escaper writes to W, a terminal, with every control character but
// newline and tab escaped as \u00XX (human.AppendControl): C0 (ESC, NUL, CR, BEL...), DEL and
// C1 (U+0080 to U+009F). Text from sessions can then neither move the
// cursor, recolour, retitle nor clear the user's terminal. The escape is
// also a valid JSON escape, so JSON output stays valid and means the
// same. Flush writes a byte a Write held back.
type Escaper struct {
	W       io.Writer
	pending []byte // the first byte of a two-byte sequence split by Write
	buf     []byte
}

func (t *Escaper) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.pending) > 0 {
		p = append(t.pending, p...)
		t.pending = nil
	}
	out := t.buf[:0]
	last := 0
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			i++
			continue
		case c < 0x20 || c == 0x7f:
			out = append(out, p[last:i]...)
			out = human.AppendControl(out, rune(c))
			i++
			last = i
			continue
		case c == 0xc2:
			if i+1 == len(p) {
				out = append(out, p[last:i]...)
				t.pending = append(t.pending[:0], c)
				last = len(p)
				i++
				continue
			}
			if d := p[i+1]; d >= 0x80 && d <= 0x9f {
				out = append(out, p[last:i]...)
				out = human.AppendControl(out, rune(d))
				i += 2
				last = i
				continue
			}
		}
		i++
	}
	if last == 0 && len(t.pending) == 0 {
		// Nothing escaped: write p as it is.
		if _, err := t.W.Write(p); err != nil {
			return 0, err
		}
		return n, nil
	}
	out = append(out, p[last:]...)
	t.buf = out
	if _, err := t.W.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a byte held back at the end of the last Write.
func (t *Escaper) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	_, err := t.W.Write(t.pending)
	t.pending = nil
	return err
}

// Escape returns s as an Escaper writes it.
func Escape(s string) string {
	var b strings.Builder
	t := &Escaper{W: &b}
	t.Write([]byte(s))
	t.Flush()
	return b.String()
}
