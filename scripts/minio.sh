#!/usr/bin/env bash
# minio.sh: the MinIO server that sessctl's replication tests and
# benchmarks run against (a real S3-compatible server on loopback).
#
# Usage:
#   scripts/minio.sh install   build it when missing (go install, about six
#                              minutes on a 2-core machine) and print its path
#   scripts/minio.sh start     start it on a free loopback port with a
#                              temporary data directory; print
#                              "endpoint=http://127.0.0.1:PORT pid=PID dir=DIR"
#                              and the credentials; stop it with kill PID
#
# The binary lives in ${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}/bin,
# outside the repository, or at $SESSCTL_MINIO when that is set. Tests find
# the same binary (internal/testenv), or skip with a message saying how to
# run this script (they fail instead under SESSCTL_REQUIRE_MINIO=1).
set -euo pipefail
cache=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
bin=${SESSCTL_MINIO:-$cache/bin/minio}

install() {
  if [ -x "$bin" ]; then
    echo "$bin"
    return
  fi
  command -v go >/dev/null || { echo "minio.sh: go is not installed" >&2; exit 1; }
  mkdir -p "$(dirname "$bin")"
  echo "minio.sh: building MinIO into $(dirname "$bin") (go install github.com/minio/minio@latest; several minutes)" >&2
  GOBIN=$(cd "$(dirname "$bin")" && pwd) GOFLAGS= go install github.com/minio/minio@latest >&2
  [ -x "$bin" ] || { echo "minio.sh: go install did not leave $bin" >&2; exit 1; }
  echo "$bin"
}

freeport() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "minio.sh: no free port found" >&2
  exit 1
}

start() {
  install >/dev/null
  local dir port console user pass pid
  dir=$(mktemp -d "${TMPDIR:-/tmp}/sessctl-minio.XXXXXX")
  port=$(freeport)
  console=$(freeport)
  user=${MINIO_ROOT_USER:-sessctl}
  pass=${MINIO_ROOT_PASSWORD:-sessctl-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')}
  MINIO_ROOT_USER=$user MINIO_ROOT_PASSWORD=$pass MINIO_BROWSER=off \
    nohup "$bin" server --quiet --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" "$dir/data" \
    >"$dir/minio.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
       curl -fsS "http://127.0.0.1:$port/minio/health/ready" >/dev/null 2>&1; then
      echo "endpoint=http://127.0.0.1:$port pid=$pid dir=$dir"
      echo "AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=$user AWS_SECRET_ACCESS_KEY=$pass AWS_REGION=us-east-1"
      return
    fi
    kill -0 "$pid" 2>/dev/null || { echo "minio.sh: the server exited; see $dir/minio.log" >&2; exit 1; }
    sleep 0.1
  done
  kill "$pid"
  echo "minio.sh: the server did not become live in 60 s; see $dir/minio.log" >&2
  exit 1
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  *) echo "usage: scripts/minio.sh install|start" >&2; exit 2 ;;
esac
