// Package workload generates realistic, seeded pi session files for
// benchmarks, the crash tests and `sessctl-bench gen`: prompts, assistant turns
// with thinking, text, tool calls and usage, tool results of 1-20 KB, a
// 100 KB image every thousand entries, branches, labels, names and
// compactions. The same seed always gives the same bytes.
package workload
