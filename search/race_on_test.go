//go:build race

package search

// raceEnabled scales TestLargeSessionMemory down under the race detector,
// which makes SQLite (translated C) many times slower.
const raceEnabled = true
