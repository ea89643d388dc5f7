package compaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/sessctl/sessctl/layout/vfs"
)

// ReadSettings returns DefaultSettings with compaction.reserveTokens and
// compaction.keepRecentTokens read from pi's settings files (see
// layout.SettingsFiles), in order, a later file winning, as pi's
// settings manager does. A file that cannot be read or parsed is skipped
// and returned among the warnings; a missing one is not.
func ReadSettings(fsys vfs.FS, files ...string) (Settings, []error) {
	settings := DefaultSettings()
	var warnings []error
	for _, f := range files {
		data, err := fsys.ReadFile(f)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
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
