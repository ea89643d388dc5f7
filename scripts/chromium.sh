#!/usr/bin/env bash
# chromium.sh: make sure a headless Chromium is there for the web viewer's
# browser tests (web TestInABrowser, driven over the DevTools
# protocol on a pipe), installing Debian's chromium with apt-get when it
# is missing, and print its path (.ci/run exports it as SESSCTL_CHROMIUM).
#
#   SESSCTL_CHROMIUM=$(scripts/chromium.sh)
set -euo pipefail
for b in "${SESSCTL_CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
  [ -n "$b" ] || continue
  if p=$(command -v "$b" 2>/dev/null); then
    echo "$p"
    exit 0
  fi
done
if command -v apt-get >/dev/null 2>&1; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "chromium.sh: installing Debian's chromium with apt-get" >&2
  $sudo apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
  if p=$(command -v chromium 2>/dev/null); then
    echo "$p"
    exit 0
  fi
fi
echo "chromium.sh: no Chromium found and none could be installed (apt-get install chromium, or set SESSCTL_CHROMIUM)" >&2
exit 1
