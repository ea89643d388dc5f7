package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessctl/sessctl/internal/term"
)

// Standard output, as main hands it to the commands.
//
// When the reader of a pipe goes away (sessctl list --json | head), the
// output is no longer wanted: sessctl ends at once, quietly, with exit
// status 0, as if it had finished. It does not die of SIGPIPE (status 141
// in a shell, which 'set -o pipefail' scripts take for a failure) and
// prints no "broken pipe". On a terminal, control characters are escaped
// (see term.Escaper), on standard error too (main wraps both): a path or
// an id with an escape sequence in an error message cannot reach the
// terminal either. What draws on the terminal on purpose (progress lines)
// writes through terminal(w), unescaped.

// errStdoutClosed is matched by write errors on a standard output whose
// reader has gone; env.fail ends the command quietly with exit 0 for it.
var errStdoutClosed = errors.New("standard output closed")

// stdoutWriter is standard output: the file, escaped on a terminal, with
// a closed pipe reported as errStdoutClosed.
type stdoutWriter struct {
	f   *os.File
	w   io.Writer // f, or a term.Escaper over f
	esc *term.Escaper
}

// newStdout wraps f, escaping control characters when tty is true.
func newStdout(f *os.File, tty bool) *stdoutWriter {
	s := &stdoutWriter{f: f, w: f}
	if tty {
		s.esc = &term.Escaper{W: f}
		s.w = s.esc
	}
	return s
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	return n, s.check(err)
}

// check turns a broken pipe into errStdoutClosed.
func (s *stdoutWriter) check(err error) error {
	if err != nil && term.IsBrokenPipe(err) {
		return fmt.Errorf("%w: %w", errStdoutClosed, err)
	}
	return err
}

// Flush writes what the terminal escaper holds back.
func (s *stdoutWriter) Flush() error {
	if s.esc == nil {
		return nil
	}
	return s.check(s.esc.Flush())
}

// terminal returns where to draw on the terminal that w is, unescaped:
// w itself for a terminal file, the file under the escaping writer main
// makes for a terminal, or nil when w is not a terminal.
func terminal(w io.Writer) io.Writer {
	switch t := w.(type) {
	case *stdoutWriter:
		if t.esc != nil {
			return rawStdout{t}
		}
	case *os.File:
		if term.IsTTY(t) {
			return t
		}
	}
	return nil
}

// rawStdout writes to the terminal without escaping.
type rawStdout struct{ s *stdoutWriter }

func (r rawStdout) Write(p []byte) (int, error) {
	n, err := r.s.f.Write(p)
	return n, r.s.check(err)
}

// writeBuffers writes bufs in order, in few system calls where w is a
// file or standard output that is not a terminal (term.WriteBuffers).
func writeBuffers(w io.Writer, bufs [][]byte) error {
	if s, ok := w.(*stdoutWriter); ok && s.esc == nil {
		return s.check(term.WriteBuffers(s.f, bufs))
	}
	return term.WriteBuffers(w, bufs)
}

// Everything sessctl prints for people shows a control character one way,
// human.AppendControl's \u001b: in text quoted by human.Quote (paths and
// names in line-oriented output, wherever they go) and on a terminal,
// where a term.Escaper escapes what commands write to standard output and
// standard error.

// termEscape returns s as a terminal shows it (term.Escape).
func termEscape(s string) string { return term.Escape(s) }
