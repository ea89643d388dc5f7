// Package stats counts what a pi session holds: entries by type, messages
// by role, and the tokens and cost that assistant messages report in their
// "usage", in total and per model; with pi 1.x's usage entries (per their
// model), and the usage of compactions, branch summaries and tool results
// (as SummariesProvider), each counted once. Count counts a list of entries (a whole
// file, or a branch); Dir adds up every session file under a directory,
// taking what unchanged files add from a stats index in the user cache
// directory (see DirOptions.NoIndex), and tells what each file spent per
// day and model (DirOptions.Usage, FileUsage; ReadFileUsage for one
// file): what the viewer's cost column and stats page show.
// It is what 'sessctl stats' prints.
package stats
