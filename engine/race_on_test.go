//go:build race

package engine_test

// raceEnabled scales the largest hostile inputs down under the race
// detector, which makes them ten times slower; `go test` without -race
// runs them at full size.
const raceEnabled = true
