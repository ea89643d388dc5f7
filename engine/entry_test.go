package engine_test

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// engine names the codec's version as a number of its own: they agree.
func TestCurrentVersionIsTheCodecs(t *testing.T) {
	if engine.CurrentVersion != jsonl.CurrentVersion {
		t.Errorf("engine.CurrentVersion = %d, the codec writes %d", engine.CurrentVersion, jsonl.CurrentVersion)
	}
}
