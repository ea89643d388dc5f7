package testenv

import "syscall"

// isWine reports whether ntdll exports wine_get_version, as only wine's
// does.
func isWine() bool {
	return syscall.NewLazyDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
