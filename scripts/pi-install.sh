#!/usr/bin/env bash
# pi-install.sh: make sure pi 0.58.3 (@mariozechner/pi-coding-agent), the
# reference implementation that tests run beside sessctl, is npm-installed
# in a cache directory outside the repository, and print that directory
# (the one holding node_modules). Installs only when it is missing.
#
# Usage: scripts/pi-install.sh [DIR]
#
# DIR defaults to $SESSCTL_PI_MODULES, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi. Needs node and npm (Node 20
# or later). Tests find the same directory, or skip with a message saying
# how to run this script (they fail instead under SESSCTL_REQUIRE_PI=1).
set -euo pipefail
version=0.58.3
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${SESSCTL_PI_MODULES:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi}}
pkg="$dir/node_modules/@mariozechner/pi-coding-agent/package.json"
installed() {
  [ -f "$pkg" ] && [ "$(node -p "require(process.argv[1]).version" "$pkg" 2>/dev/null)" = "$version" ]
}
if installed; then
  echo "$dir"
  exit 0
fi
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "pi-install.sh: $tool is not installed (Node.js 20 or later is needed)" >&2; exit 1; }
done
created=
[ -d "$dir" ] || { mkdir -p "$dir"; created=1; }
case "$(cd "$dir" && pwd -P)/" in
  "$(cd "$root" && pwd -P)"/*)
    [ -z "$created" ] || rmdir "$dir"
    echo "pi-install.sh: $dir is inside the repository; pick a directory outside it" >&2
    exit 1 ;;
esac
[ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
echo "pi-install.sh: installing @mariozechner/pi-coding-agent@$version into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@mariozechner/pi-coding-agent@$version" >&2
installed || { echo "pi-install.sh: the install did not leave pi $version in $dir" >&2; exit 1; }
echo "$dir"
