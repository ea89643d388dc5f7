//go:build race

package importer_test

const raceEnabled = true
