#!/usr/bin/env bash
# lint.sh: staticcheck, pinned, over the whole module (make lint; CI runs
# it). The binary is installed with go install into
# ${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}/bin, outside
# the repository, when it is missing or another version.
set -euo pipefail
version=v0.8.2
cd "$(dirname "$0")/.."
cache=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
bin=$cache/bin/staticcheck
if ! [ -x "$bin" ] || ! "$bin" -version 2>/dev/null | grep -q "(${version#v})"; then
  mkdir -p "$cache/bin"
  echo "lint.sh: installing staticcheck $version into $cache/bin" >&2
  GOBIN=$(cd "$cache/bin" && pwd) GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$version" >&2
fi
"$bin" ./...
