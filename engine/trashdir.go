package engine

import (
	"path/filepath"
	"strings"
	"time"
)

// TrashDir returns where Trash should move the session file at path
// (absolute) when deleted at now, as 'sessctl delete' does: under
// <root>/.trash/<time>/ keeping the file's folder below root when the file
// is in the store root (pass "" for none), otherwise in .trash/<time>
// beside the file. One directory per deletion time keeps deletions of
// the same name apart; listing and id resolution skip .trash directories.
func TrashDir(root, path string, now time.Time) string {
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			if rel, err := filepath.Rel(abs, filepath.Dir(path)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return filepath.Join(abs, ".trash", stamp, rel)
			}
		}
	}
	return filepath.Join(filepath.Dir(path), ".trash", stamp)
}
