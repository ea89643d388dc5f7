#!/usr/bin/env bash
# pi-install.sh: make sure the pi releases (@mariozechner/pi-coding-agent)
# that tests run beside sessctl are npm-installed in cache directories
# outside the repository (each only when it is missing), and print where.
#
# Usage:
#   scripts/pi-install.sh                 the two releases the tests use:
#       the reference, 0.73.1 (the newest pi; sessctl follows it), and
#       0.58.3 (the release ../shared/conformance/pi was recorded with).
#       Prints, for eval "$(scripts/pi-install.sh)":
#         export SESSCTL_PI_MODULES=DIR       (0.73.1)
#         export SESSCTL_PI058_MODULES=DIR    (0.58.3)
#   scripts/pi-install.sh VERSION [DIR]   one release; prints its directory
#       (PI_MODULES=$(scripts/pi-install.sh 0.58.3) make bench).
#
# Directories (each the one holding node_modules), with
# cache=${XDG_CACHE_HOME:-$HOME/.cache}/sessctl: the reference in
# $SESSCTL_PI_MODULES, else $cache/pi; 0.58.3 in $SESSCTL_PI058_MODULES,
# else $cache/pi-0.58.3; any other VERSION in $cache/pi-VERSION. A
# directory holding another release is updated to the one asked for.
# Needs node and npm (Node 20 or later). Tests find the same directories
# (internal/testenv), or skip with a message saying how to run this script
# (they fail instead under SESSCTL_REQUIRE_PI=1).
#
# The reference release is named here and in internal/testenv/pi.go
# (PiVersion); docs/pi-reference.md says how to move it.
set -euo pipefail
reference=0.73.1
corpus=0.58.3
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sessctl

default_dir() {
  case "$1" in
    "$reference") echo "${SESSCTL_PI_MODULES:-$cache/pi}" ;;
    "$corpus") echo "${SESSCTL_PI058_MODULES:-$cache/pi-$corpus}" ;;
    *) echo "$cache/pi-$1" ;;
  esac
}

# install VERSION DIR: install pi VERSION into DIR unless it is there;
# print DIR.
install() {
  local version=$1 dir=$2
  case "$dir" in */node_modules) dir=${dir%/node_modules} ;; esac
  local pkg="$dir/node_modules/@mariozechner/pi-coding-agent/package.json"
  local have=
  [ -f "$pkg" ] && have=$(node -p "require(process.argv[1]).version" "$pkg" 2>/dev/null || true)
  if [ "$have" = "$version" ]; then
    echo "$dir"
    return
  fi
  for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "pi-install.sh: $tool is not installed (Node.js 20 or later is needed)" >&2; exit 1; }
  done
  local created=
  [ -d "$dir" ] || { mkdir -p "$dir"; created=1; }
  case "$(cd "$dir" && pwd -P)/" in
    "$(cd "$root" && pwd -P)"/*)
      [ -z "$created" ] || rmdir "$dir"
      echo "pi-install.sh: $dir is inside the repository; pick a directory outside it" >&2
      exit 1 ;;
  esac
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  if [ -n "$have" ]; then
    echo "pi-install.sh: replacing pi $have in $dir with $version" >&2
  fi
  echo "pi-install.sh: installing @mariozechner/pi-coding-agent@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@mariozechner/pi-coding-agent@$version" >&2
  have=$(node -p "require(process.argv[1]).version" "$pkg" 2>/dev/null || true)
  [ "$have" = "$version" ] || { echo "pi-install.sh: the install did not leave pi $version in $dir" >&2; exit 1; }
  echo "$dir"
}

case $# in
  0)
    ref=$(install "$reference" "$(default_dir "$reference")")
    old=$(install "$corpus" "$(default_dir "$corpus")")
    printf 'export SESSCTL_PI_MODULES=%q\n' "$ref"
    printf 'export SESSCTL_PI058_MODULES=%q\n' "$old"
    ;;
  1 | 2)
    [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || {
      echo "pi-install.sh: $1 is not a release version (like $reference)" >&2
      exit 2
    }
    install "$1" "${2:-$(default_dir "$1")}"
    ;;
  *)
    echo "usage: scripts/pi-install.sh [VERSION [DIR]]" >&2
    exit 2 ;;
esac
