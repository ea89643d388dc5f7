// Package human formats values for people to read in one line of output:
// counts with their noun, cut and folded text, quoted file names, sizes
// and dollar amounts; and it reads back the durations and sizes people
// type (ParseDuration, ParseSize). The CLI and the libraries that write
// reports and transcripts (engine/repair, engine/render) share it, so the
// same value reads the same everywhere.
package human
