// Package term is what the CLI needs of the terminal and of standard
// output as files: whether a file is a terminal (IsTTY), an Escaper that
// keeps control characters from reaching one, whether a write failed for
// a pipe without a reader (IsBrokenPipe), and WriteBuffers, which hands
// many pieces to the system in few calls. It writes only to the writers it
// is given and never decides what is printed.
package term
