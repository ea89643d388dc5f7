package layout

import (
	"errors"
	"os"
	"path/filepath"
)

// CacheDirName is the name of sessctl's directory under the user cache
// directory.
const CacheDirName = "sessctl"

// CacheDir returns the directory where sessctl keeps its caches and
// indexes (the list index, offset indexes): never inside another
// program's store. It is $XDG_CACHE_HOME/sessctl when XDG_CACHE_HOME is
// an absolute path, on every system, else <os.UserCacheDir()>/sessctl.
// Nothing is created; callers create what they need (0700) and treat a
// cache they cannot create as absent.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = ""
	}
	dir := CacheDirFrom(os.Getenv, base)
	if dir == "" {
		return "", errors.New("no user cache directory (neither XDG_CACHE_HOME nor the system's is set)")
	}
	return dir, nil
}

// CacheDirFrom is CacheDir with the environment env and the system's user
// cache directory userCache ("" when there is none). It returns "" when
// neither gives an absolute directory.
func CacheDirFrom(env Env, userCache string) string {
	if v := env("XDG_CACHE_HOME"); filepath.IsAbs(v) {
		return filepath.Join(v, CacheDirName)
	}
	if filepath.IsAbs(userCache) {
		return filepath.Join(userCache, CacheDirName)
	}
	return ""
}
