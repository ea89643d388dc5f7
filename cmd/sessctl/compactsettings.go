package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/layout"
)

// compactionSettings returns compaction.DefaultSettings with
// compaction.reserveTokens and compaction.keepRecentTokens read from the
// agent's settings.json and, for pi, the project's <cwd>/.pi/settings.json
// (the project wins), as pi's settings manager does. A file that cannot
// be read or parsed is skipped and returned among the warnings; a missing
// one is not.
func compactionSettings(agent layout.Agent, cwd string) (compaction.Settings, []error) {
	settings := compaction.DefaultSettings()
	var warnings []error
	var files []string
	if dir, err := layout.AgentDir(agent); err == nil {
		files = append(files, filepath.Join(dir, "settings.json"))
	}
	if agent == layout.AgentPi && cwd != "" {
		files = append(files, filepath.Join(cwd, ".pi", "settings.json"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				warnings = append(warnings, err)
			}
			continue
		}
		var v struct {
			Compaction struct {
				ReserveTokens    *float64 `json:"reserveTokens"`
				KeepRecentTokens *float64 `json:"keepRecentTokens"`
			} `json:"compaction"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			warnings = append(warnings, fmt.Errorf("ignoring %s: %w", f, err))
			continue
		}
		if p := v.Compaction.ReserveTokens; p != nil {
			settings.ReserveTokens = int(*p)
		}
		if p := v.Compaction.KeepRecentTokens; p != nil {
			settings.KeepRecentTokens = int(*p)
		}
	}
	return settings, warnings
}
