package testenv

import (
	"os"
	"runtime"
	"testing"
)

// UnderWine reports whether the test binary runs under wine: on Windows,
// when SESSCTL_UNDER_WINE is set (scripts/test-windows.sh sets it to
// wine's version) or ntdll exports wine_get_version, as only wine's does.
func UnderWine() bool {
	return runtime.GOOS == "windows" && (os.Getenv("SESSCTL_UNDER_WINE") != "" || isWine())
}

// SkipUnderWine skips the test when it runs under wine, naming api, the
// Windows API or behaviour wine does not implement that the test needs.
func SkipUnderWine(t testing.TB, api string) {
	t.Helper()
	if UnderWine() {
		v := os.Getenv("SESSCTL_UNDER_WINE")
		if v == "" || v == "1" {
			v = "wine"
		}
		t.Skipf("%s does not implement %s", v, api)
	}
}

// SkipOnWindows skips the test on Windows, saying why: what it tests
// does not exist there (named pipes in the filesystem, permission bits,
// signals, symbolic links without privileges).
func SkipOnWindows(t testing.TB, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skipf("POSIX only: %s", why)
	}
}

// WineRename names what wine lacks for replacing an open file.
const WineRename = "SetFileInformationByHandle(FileRenameInfoEx) with FILE_RENAME_FLAG_POSIX_SEMANTICS, so a file open in this process cannot be replaced (MoveFileEx refuses)"

// SkipUnderWineIf skips the test under wine when cond holds (typically:
// the error a call returned is one wine's missing api explains).
func SkipUnderWineIf(t testing.TB, cond bool, api string) {
	t.Helper()
	if cond {
		SkipUnderWine(t, api)
	}
}
