// Package term is what the CLI needs of its process, the terminal and
// standard output as files: whether a file is a terminal (IsTTY), an
// Escaper that keeps control characters from reaching one, whether a
// write failed for a pipe without a reader (IsBrokenPipe, CatchSIGPIPE),
// WriteBuffers, which hands many pieces to the system in few calls, and
// the context a signal cancels (SignalContext). It writes only to the writers it
// is given and never decides what is printed.
package term
