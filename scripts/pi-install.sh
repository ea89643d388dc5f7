#!/usr/bin/env bash
# pi-install.sh: make sure the pi releases that tests run beside sessctl
# are npm-installed in cache directories outside the repository (each only
# when it is missing), and print where. pi is published as
# @earendil-works/pi-coding-agent from 1.0 on, as
# @mariozechner/pi-coding-agent up to 0.73.1; the name follows the version.
#
# Usage:
#   scripts/pi-install.sh                 the two releases the tests use:
#       the reference, 1.6.0 (the newest pi; sessctl follows it), and
#       0.58.3 (the release ../shared/conformance/pi was recorded with).
#       Prints, for eval "$(scripts/pi-install.sh)":
#         export SESSCTL_PI_MODULES=DIR       (1.6.0)
#         export SESSCTL_PI058_MODULES=DIR    (0.58.3)
#   scripts/pi-install.sh VERSION [DIR]   one release; prints its directory
#       (PI_MODULES=$(scripts/pi-install.sh 0.58.3) make bench).
#   scripts/pi-install.sh package VERSION  prints the npm package name
#       VERSION is published under.
#   scripts/pi-install.sh reference       prints the reference release.
#   scripts/pi-install.sh newest          asks npm for the newest release
#       under both names and prints "PACKAGE VERSION" (exit 1 when npm
#       cannot be asked).
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
reference=1.6.0
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

# package VERSION: the npm name pi VERSION is published under.
package() {
  case "$1" in
    0.*) echo "@mariozechner/pi-coding-agent" ;;
    *) echo "@earendil-works/pi-coding-agent" ;;
  esac
}

# install VERSION DIR: install pi VERSION into DIR unless it is there;
# print DIR.
install() {
  local version=$1 dir=$2
  case "$dir" in */node_modules) dir=${dir%/node_modules} ;; esac
  local name
  name=$(package "$version")
  local pkg="$dir/node_modules/$name/package.json"
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
  echo "pi-install.sh: installing $name@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$name@$version" >&2
  have=$(node -p "require(process.argv[1]).version" "$pkg" 2>/dev/null || true)
  [ "$have" = "$version" ] || { echo "pi-install.sh: the install did not leave pi $version in $dir" >&2; exit 1; }
  echo "$dir"
}

# newest: the newest pi on npm, under either name, as "PACKAGE VERSION".
newest() {
  command -v npm >/dev/null || { echo "pi-install.sh: npm is not installed" >&2; exit 1; }
  local best= bestname= name v
  for name in @earendil-works/pi-coding-agent @mariozechner/pi-coding-agent; do
    v=$(npm view "$name" version 2>/dev/null) || continue
    [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -n1)" = "$v" ]; then
      best=$v bestname=$name
    fi
  done
  [ -n "$best" ] || { echo "pi-install.sh: npm gave no pi release" >&2; exit 1; }
  echo "$bestname $best"
}

case "${1:-}" in
  package) [ $# -eq 2 ] && { package "$2"; exit 0; } ;;
  reference) [ $# -eq 1 ] && { echo "$reference"; exit 0; } ;;
  newest) [ $# -eq 1 ] && { newest; exit 0; } ;;
esac
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
