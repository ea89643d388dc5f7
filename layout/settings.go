package layout

import "path/filepath"

// SettingsFiles returns the settings files an agent whose directory is
// agentDir reads for a session in cwd, the one that wins last:
// <agentDir>/settings.json and, for pi, the project's
// <cwd>/.pi/settings.json, as pi's settings manager reads them. An empty
// agentDir or cwd names no file.
func SettingsFiles(a Agent, agentDir, cwd string) []string {
	var files []string
	if agentDir != "" {
		files = append(files, filepath.Join(agentDir, "settings.json"))
	}
	if a == AgentPi && cwd != "" {
		files = append(files, filepath.Join(cwd, ".pi", "settings.json"))
	}
	return files
}
