package layout

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestSettingsFiles(t *testing.T) {
	agent, cwd := filepath.FromSlash("/a/agent"), filepath.FromSlash("/w/proj")
	cases := []struct {
		a             Agent
		agentDir, cwd string
		want          []string
	}{
		{AgentPi, agent, cwd, []string{filepath.Join(agent, "settings.json"), filepath.Join(cwd, ".pi", "settings.json")}},
		{AgentIndusagi, agent, cwd, []string{filepath.Join(agent, "settings.json")}}, // no project settings
		{AgentPi, "", cwd, []string{filepath.Join(cwd, ".pi", "settings.json")}},
		{AgentPi, agent, "", []string{filepath.Join(agent, "settings.json")}},
	}
	for _, tc := range cases {
		if got := SettingsFiles(tc.a, tc.agentDir, tc.cwd); !slices.Equal(got, tc.want) {
			t.Errorf("SettingsFiles(%v, %q, %q) = %q, want %q", tc.a, tc.agentDir, tc.cwd, got, tc.want)
		}
	}
}
