#!/usr/bin/env bash
# codex-install.sh: make sure the Codex CLI (@openai/codex on npm) that
# migrate/codex's TestRealCodex runs is installed in a cache directory
# outside the repository, and print the path of its binary (for
# SESSCTL_CODEX). Installs only when it is missing or another version.
#
# Usage: scripts/codex-install.sh [VERSION]   (default: the tested 0.171.0)
set -euo pipefail
version=${1:-0.171.0}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/codex
pkg="$dir/node_modules/@openai/codex/package.json"
bin="$dir/node_modules/.bin/codex"
installed() {
  [ -x "$bin" ] && [ -f "$pkg" ] && [ "$(node -p "require(process.argv[1]).version" "$pkg" 2>/dev/null)" = "$version" ]
}
if ! installed; then
  for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "codex-install.sh: $tool is not installed" >&2; exit 1; }
  done
  mkdir -p "$dir"
  case "$(cd "$dir" && pwd -P)/" in
    "$(cd "$root" && pwd -P)"/*) echo "codex-install.sh: $dir is inside the repository" >&2; exit 1 ;;
  esac
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  echo "codex-install.sh: installing @openai/codex@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/codex@$version" >&2
  installed || { echo "codex-install.sh: the install did not leave Codex $version in $dir" >&2; exit 1; }
fi
echo "$bin"
