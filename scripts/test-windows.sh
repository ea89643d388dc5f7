#!/bin/sh
# test-windows.sh: run the test suite as Windows programs under wine.
#
# Every package's test binary is built with GOOS=windows GOARCH=amd64
# (go test -c; the race detector is not available for cross builds) and
# run under wine64 in the package's directory, in a wine prefix of its own
# (WINEPREFIX, default ~/.cache/sessctl/wine). wine64 is installed with
# apt-get when it is missing. Two gaps of wine before 9.0 are bridged (see
# below): the prefix gets the bcryptprimitives.dll Go's runtime needs
# (scripts/wineprng), and the binaries use Go's own fallback for deleting
# files on old Windows. SESSCTL_UNDER_WINE (wine's version) tells the
# tests they run under wine, so that a test needing a Windows API wine
# lacks skips and says which. Prints one line per package and exits
# non-zero when any package fails. Each skipped test is listed under its
# package with its reason.
#
#   scripts/test-windows.sh [PACKAGE...]     default ./...
#   TESTFLAGS=-test.run=Lock scripts/test-windows.sh ./lock
set -eu

cd "$(dirname "$0")/.."
GO=${GO:-go}

wine=
for w in wine64 /usr/lib/wine/wine64; do
	if command -v "$w" >/dev/null 2>&1; then wine=$w; break; fi
done
if [ -z "$wine" ]; then
	echo "test-windows: installing wine64" >&2
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q wine64 >/dev/null
	for w in wine64 /usr/lib/wine/wine64; do
		if command -v "$w" >/dev/null 2>&1; then wine=$w; break; fi
	done
	[ -n "$wine" ] || { echo "test-windows: no wine64 after apt-get install wine64" >&2; exit 1; }
fi

export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$HOME/.cache/sessctl/wine}"
mkdir -p "$WINEPREFIX"
"$wine" wineboot --init >/dev/null 2>&1 || true
SESSCTL_UNDER_WINE=$("$wine" --version 2>/dev/null || echo wine)
export SESSCTL_UNDER_WINE
# Go's Windows runtime needs ProcessPrng from bcryptprimitives.dll, which
# wine before 9.0 does not have: give the prefix a forwarder to
# RtlGenRandom (see scripts/wineprng).
prng="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -e "$prng" ]; then
	$GO run ./scripts/wineprng "$prng"
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/sessctl-windows.XXXXXX")
trap 'rm -rf "$out"' EXIT

# Wine before 9.0 fails NtSetInformationFile(FileDispositionInformationEx)
# with STATUS_NOT_IMPLEMENTED, which Go's Deleteat (os.RemoveAll, and so
# every t.TempDir cleanup) does not take for "unsupported": it reports
# "Invalid function" instead of using its fallback for older Windows. The
# test binaries are built with an overlay that turns the fallback on.
cat >"$out/deleteat.go" <<'GO'
package windows

func init() { TestDeleteatFallback = true }
GO
printf '{"Replace":{"%s/src/internal/syscall/windows/zz_sessctl_wine.go":"%s"}}\n' \
	"$($GO env GOROOT)" "$out/deleteat.go" >"$out/overlay.json"

[ $# -gt 0 ] || set -- ./...
pkgs=$($GO list "$@")
fail=0
for p in $pkgs; do
	dir=$($GO list -f '{{.Dir}}' "$p")
	exe="$out/$(echo "$p" | tr / _).test.exe"
	if ! CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $GO test -c -overlay "$out/overlay.json" -o "$exe" "$p" >"$out/build.log" 2>&1; then
		echo "FAIL  $p (build)"; sed 's/^/      /' "$out/build.log"; fail=1; continue
	fi
	if [ ! -f "$exe" ]; then
		echo "-     $p (no tests)"; continue
	fi
	log="$out/run.log"
	if (cd "$dir" && "$wine" "$exe" -test.v -test.count=1 -test.timeout=30m ${TESTFLAGS:-}) >"$log" 2>&1; then
		echo "ok    $p"
	else
		echo "FAIL  $p"; grep -v -e '^=== ' -e '^--- PASS' -e '^    --- PASS' "$log" | tail -200 | sed 's/^/      /'; fail=1
	fi
	# Each skip and its reason (printed just before its "--- SKIP").
	grep -B1 -- '--- SKIP' "$log" | grep -v -e '^--$' -e '^=== ' | sed 's/^ */      /' || true
	rm -f "$exe"
done
exit $fail
