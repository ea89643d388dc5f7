package layout_test

import (
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout"
)

func TestCacheDirFrom(t *testing.T) {
	t.Parallel()
	abs := func(p string) string { r, _ := filepath.Abs(p); return r }
	for _, tc := range []struct {
		name      string
		env       map[string]string
		userCache string
		want      string
	}{
		{"xdg", map[string]string{"XDG_CACHE_HOME": abs("/x/cache")}, abs("/home/me/.cache"), filepath.Join(abs("/x/cache"), "sessctl")},
		{"xdg relative ignored", map[string]string{"XDG_CACHE_HOME": "rel"}, abs("/home/me/.cache"), filepath.Join(abs("/home/me/.cache"), "sessctl")},
		{"system", nil, abs("/Users/me/Library/Caches"), filepath.Join(abs("/Users/me/Library/Caches"), "sessctl")},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := layout.CacheDirFrom(func(k string) string { return tc.env[k] }, tc.userCache)
			if got != tc.want {
				t.Errorf("CacheDirFrom = %q, want %q", got, tc.want)
			}
		})
	}
}
