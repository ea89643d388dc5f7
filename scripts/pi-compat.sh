#!/usr/bin/env bash
# pi-compat.sh: run sessctl's pi-facing tests against a given pi release,
# to see where a new pi behaves otherwise than the reference sessctl
# follows (docs/pi-reference.md says what to do then).
#
# Usage: scripts/pi-compat.sh VERSION|newest [GO TEST FLAGS...]
#
# Installs pi VERSION (@earendil-works/pi-coding-agent from 1.0 on,
# @mariozechner/pi-coding-agent before; "newest" asks npm for the newest
# release under both names) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi-VERSION (scripts/pi-install.sh;
# the reference release goes to its usual directory) and runs, with that
# release as the reference (SESSCTL_PI_MODULES, SESSCTL_PI_VERSION) and
# required (SESSCTL_REQUIRE_PI=1), every test that runs the reference pi:
# the differential tests on pi's own random sessions and on the corpus,
# the compaction cases, sessctl compact, the SessionManager parity table,
# pi writing beside sessctl, the example agent and the ADK adapter. It
# prints the figures (states, preparations, forks and branches as pi's)
# and the failures, and keeps the whole log; the exit status is go
# test's. For a release other
# than the reference it also says how far pi's session code moved: the
# lines that differ in dist/core/session-manager.js, compaction/ and
# messages.js (docs/pi-reference.md says how to read them).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/pi-compat.sh VERSION|newest [GO TEST FLAGS...]" >&2; exit 2; }
version=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
reference=$(scripts/pi-install.sh reference)
if [ "$version" = newest ]; then
  newest=$(scripts/pi-install.sh newest)
  version=${newest#* }
  echo "pi-compat.sh: the newest pi on npm is ${newest% *}@$version (the reference is $reference)" >&2
fi
dir=$(scripts/pi-install.sh "$version")
if [ "$version" != "$reference" ]; then
  refdir=$(scripts/pi-install.sh "$reference")
  new="$dir/node_modules/$(scripts/pi-install.sh package "$version")/dist/core"
  old="$refdir/node_modules/$(scripts/pi-install.sh package "$reference")/dist/core"
  for f in session-manager.js compaction messages.js; do
    n=$(diff -r "$old/$f" "$new/$f" 2>/dev/null | grep -c '^[<>]' || true)
    echo "pi-compat.sh: $f: $n lines differ from the reference $reference" >&2
  done
fi
# The tests that call testenv.Pi (internal/testenv's TestPiCompatCoversPiTests
# keeps this list complete).
tests='^(TestPiSessionManagerParity|TestAppendsAsPi16|TestContextEditLoadsInPi|TestLabelsBesideARunningPi|TestPiReference|TestPiReferenceCorpus|TestPrepareCasesArePis|TestCompactAsPi|TestAgent|TestLabelOnAFullTmpfs|TestInABrowser|TestServeAPiStore|TestPiOpensAdapterSessions)$'
packages=(./engine/ ./compaction/ ./cmd/sessctl/ ./examples/agent/ ./web/)
log=$(mktemp "${TMPDIR:-/tmp}/pi-compat-$version.XXXXXX")
echo "pi-compat.sh: pi $version from $dir; log in $log" >&2
status=0
SESSCTL_PI_MODULES=$dir SESSCTL_PI_VERSION=$version SESSCTL_REQUIRE_PI=1 \
  go test -count=1 -v -run "$tests" "$@" "${packages[@]}" > "$log" 2>&1 || status=$?
# ./adk/ is a module of its own (the ADK-Go adapter): its go test runs there.
(cd adk && SESSCTL_PI_MODULES=$dir SESSCTL_PI_VERSION=$version SESSCTL_REQUIRE_PI=1 \
  go test -count=1 -v -run "$tests" "$@" ./...) >> "$log" 2>&1 || status=$?
grep -E 'as pi|load in pi|listed as pi|loaded as pi' "$log" | sed 's/^ *//' || true
grep -E '^(--- FAIL|FAIL|ok )' "$log" || true
exit $status
