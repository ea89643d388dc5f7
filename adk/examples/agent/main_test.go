package main

import (
	"strings"
	"testing"
)

// TestRun runs the example: two turns through ADK's runner with a tool
// call each, eight events kept in one pi session file.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), t.TempDir(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"weather_agent: Let me check. call weather(map[city:Lyon])",
		"weather_agent: The forecast: sunny and 21°C in Lyon.",
		": 8 events\n",
		"file: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
