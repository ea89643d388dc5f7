// Package errs holds the errors that engine, engine/agentuse and migrate
// share, so that errors.Is matches the same values whichever package
// returned them: ErrNotFound, ErrClosed, ErrCorrupt with *CorruptError
// (file, line, offset), ErrUnsupportedVersion with *VersionError and
// ErrAmbiguous with *AmbiguousError. It also holds the one sync policy
// type (SyncPolicy) both stores take, so that a program (the CLI) passes
// one value to either without converting it.
//
// It is internal so that there is one public name for each: engine and
// engine/agentuse re-export them (engine.ErrCorrupt is errs.ErrCorrupt,
// engine.CorruptError is an alias of errs.CorruptError, and so on), and a
// library user never needs to import this package. The lock package's
// ErrLocked is re-exported the same way.
package errs
