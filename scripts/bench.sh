#!/usr/bin/env bash
# bench.sh: `make bench`. Go benchmarks, then whole-process runs of sessctl
# (and, when PI_MODULES names a folder where pi 0.58.3 is installed with
# npm, of pi) on the same generated workloads, printed as a table.
#
#   BENCH_DIR    where workloads are generated and kept (default .bench)
#   PI_MODULES   folder with node_modules/@mariozechner/pi-coding-agent
#   RUNS         whole-process runs per measurement (median; default 5)
#   GOBENCH      set to 0 to skip the Go benchmarks
#   SYNCBENCH    set to 0 to skip the sync benchmarks (MinIO)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
B=${BENCH_DIR:-$root/.bench}
RUNS=${RUNS:-5}
mkdir -p "$B"
B=$(cd "$B" && pwd)
S="$B/sessctl"
go build -o "$S" ./cmd/sessctl

say() { printf '%s\n' "$*" >&2; }
[ -f "$B/big.jsonl" ] || { say "generating big.jsonl (100,000 entries)"; "$S" gen session --entries 100000 --seed 1 "$B/big.jsonl" >/dev/null; }
[ -d "$B/sessions" ] || { say "generating sessions/ (5,000 x 50 KB)"; "$S" gen dir --sessions 5000 --size 50000 --seed 1 "$B/sessions" >/dev/null; }
[ -f "$B/v1.jsonl" ] || { say "generating v1.jsonl (100,000 entries, version 1)"; "$S" gen session --entries 100000 --v1 --seed 1 "$B/v1.jsonl" >/dev/null; }
[ -f "$B/v1-500.jsonl" ] || { say "generating v1-500.jsonl (330,000 entries, version 1)"; "$S" gen session --entries 330000 --v1 --seed 2 "$B/v1-500.jsonl" >/dev/null; }

if [ "${GOBENCH:-1}" != 0 ]; then
  say "== Go benchmarks"
  # Whole-file benchmarks run a few times; per-operation ones need many
  # iterations to be steady.
  { SESSCTL_BENCH_DIR="$B" go test -run='^$' \
      -bench='^Benchmark(ParseFile|Canonical|OpenContext|ListScan|ListIndexed|MigrateStream|AgentUseReadSession10k)$' \
      -benchtime=10x -count=1 ./internal/jsonl/ ./engine/ ./engine/agentuse/ ./migrate/
    SESSCTL_BENCH_DIR="$B" go test -run='^$' \
      -bench='^Benchmark(IsCanonical|AppendNoSync|AppendSync|AgentUseAddPart|AgentUseUpdatePart|AcquireRelease)$' \
      -benchtime=2s -count=1 ./internal/jsonl/ ./engine/ ./engine/agentuse/ ./lock/
  } | tee "$B/go-bench.txt" >&2
fi

# Sync against MinIO on loopback (scripts/minio.sh install builds it; the
# benchmarks are skipped without it): initial push of sessions/, status
# and no-change push of it, push after 10 appends to big.jsonl, and the
# lag of continuous replication at 100 appends/s.
if [ "${SYNCBENCH:-1}" != 0 ]; then
  say "== sync benchmarks (MinIO on loopback)"
  SESSCTL_BENCH_DIR="$B" go test -run='^$' -bench='^BenchmarkSync' -benchtime=1x -count=1 -timeout 2h ./replica/ \
    | tee "$B/sync-bench.txt" >&2
fi

# measure PREP CMD...: runs PREP (untimed) then CMD, RUNS times; prints
# "median-seconds max-rss-kib". Wall time is taken in nanoseconds around
# the process (/usr/bin/time only reports the peak RSS).
measure() {
  local prep=$1; shift
  local times=() rss=0 t0 t1 m
  for _ in $(seq "$RUNS"); do
    eval "$prep"
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$B/time.out" "$@" >/dev/null 2>"$B/stderr.out" || { cat "$B/stderr.out" >&2; return 1; }
    t1=$(date +%s%N)
    read -r m < "$B/time.out"
    times+=("$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')"); [ "$m" -gt "$rss" ] && rss=$m
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")" "$rss"
}

# median_rate CMD...: runs CMD (which prints "... N entries/s") RUNS times
# and prints the median rate.
median_rate() {
  for _ in $(seq "$RUNS"); do
    rm -rf "$B/append"
    "$@" "$B/append" | sed 's/.*: \([0-9]*\) entries\/s/\1/'
  done | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
  rm -rf "$B/append"
}
size() { stat -c %s "$1"; }
dirsize() { du -sb "$1" | cut -f1; }

declare -A T R
say "== whole-process runs (median of $RUNS)"
read -r T[ctx] R[ctx] < <(measure : "$S" context "$B/big.jsonl")
read -r T[listscan] R[listscan] < <(measure : "$S" list --dir "$B/sessions" --json --no-index)
"$S" list --dir "$B/sessions" --json >/dev/null   # warm the index
read -r T[listidx] R[listidx] < <(measure : "$S" list --dir "$B/sessions" --json)
read -r T[mig] R[mig] < <(measure "cp $B/v1.jsonl $B/work.jsonl; rm -f $B/work.jsonl.v1.bak" "$S" migrate --no-backup "$B/work.jsonl")
read -r T[mig500] R[mig500] < <(RUNS=1 measure "cp $B/v1-500.jsonl $B/work.jsonl" "$S" migrate --no-backup "$B/work.jsonl")
rm -f "$B/work.jsonl"
app10=$(median_rate "$S" gen append --entries 10000)
app=$(median_rate "$S" gen append --entries 100000)
apps=$(RUNS=1 median_rate "$S" gen append --entries 2000 --sync)

# search: a copy of sessions/ (the update run appends to it), the index in
# its own directory. The query has 121 hits, 100 shown.
SQ='jsonPointer OR goroutineFunction OR resultJson'
SRG='jsonPointer|goroutineFunction|resultJson'
[ -d "$B/search-sessions" ] || { cp -r "$B/sessions" "$B/search-sessions"; rm -f "$B/search-sessions/.sessctl-list-index"; }
SS=("$S" search --store "$B/search-sessions" --index-dir "$B/search-index" --limit 100)
say "== search"
read -r T[sbuild] R[sbuild] < <(RUNS=1 measure "rm -rf $B/search-index" "${SS[@]}" "$SQ")
sidx=$(dirsize "$B/search-index")
read -r T[swarm] R[swarm] < <(measure : "${SS[@]}" "$SQ")
# grow10: ten sessions each get one more entry (a user message).
grow10() {
  local n=0 f
  for f in $(ls "$B/search-sessions" | head -10); do
    n=$((n + 1))
    printf '{"type":"message","id":"g%07x","parentId":null,"timestamp":"2026-06-01T00:00:00.000Z","message":{"role":"user","content":"grown entry %s","timestamp":0}}\n' "$((RANDOM * 32768 + RANDOM))" "$n" >> "$B/search-sessions/$f"
  done
}
read -r T[supd] R[supd] < <(measure grow10 "${SS[@]}" "$SQ")
# rg's output goes to a file: with stdout on /dev/null it stops at the
# first match.
read -r T[rg] R[rg] < <(measure : sh -c 'rg --json "$1" "$2" > "$3"' rg "$SRG" "$B/search-sessions" "$B/rg.out")

have_pi=0
if [ -n "${PI_MODULES:-}" ]; then
  have_pi=1
  P=(node "$root/scripts/pi-bench.mjs" "$PI_MODULES")
  say "== pi 0.58.3 on the same files"
  read -r T[pctx] R[pctx] < <(measure : "${P[@]}" context "$B/big.jsonl")
  rm -f "$B/sessions/.sessctl-list-index"
  read -r T[plist] R[plist] < <(measure : "${P[@]}" list "$B/sessions")
  read -r T[pmig] R[pmig] < <(measure "cp $B/v1.jsonl $B/work.jsonl" "${P[@]}" open "$B/work.jsonl")
  rm -f "$B/work.jsonl"
  papp=$(median_rate "${P[@]}" append 10000)
fi

mb() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f MB/s", b / 1e6 / t }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3fx", a / b; else print "-" }'; }
big=$(size "$B/big.jsonl"); sess=$(dirsize "$B/sessions"); v1=$(size "$B/v1.jsonl"); v1b=$(size "$B/v1-500.jsonl")

echo
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3), $(uname -sr)"
echo
printf '| %-44s | %-9s | %-13s | %-9s | %-9s | %-9s | %-9s |\n' workload "sessctl" throughput "peak RSS" "pi 0.58.3" "pi RSS" "time ratio"
printf '|%s|\n' "----------------------------------------------|-----------|---------------|-----------|-----------|-----------|-----------"
row() { # label time bytes rss pitime pirss
  local pt=${5:--} pr=${6:-}
  printf '| %-44s | %-9s | %-13s | %-9s | %-9s | %-9s | %-9s |\n' "$1" "$2 s" "$(mb "$3" "$2")" "$(mib "$4")" \
    "$([ "$pt" = - ] && echo - || echo "$pt s")" "$([ -z "$pr" ] && echo - || mib "$pr")" "$([ "$pt" = - ] && echo - || ratio "$2" "$pt")"
}
row "open + context, 100k entries ($((big/1000000)) MB)" "${T[ctx]}" "$big" "${R[ctx]}" "${T[pctx]:-}" "${R[pctx]:-}"
row "list 5,000 sessions ($((sess/1000000)) MB), no index" "${T[listscan]}" "$sess" "${R[listscan]}" "${T[plist]:-}" "${R[plist]:-}"
row "list 5,000 sessions, warm index" "${T[listidx]}" "$sess" "${R[listidx]}" "${T[plist]:-}" "${R[plist]:-}"
row "migrate v1 file ($((v1/1000000)) MB)" "${T[mig]}" "$v1" "${R[mig]}" "${T[pmig]:-}" "${R[pmig]:-}"
row "migrate v1 file ($((v1b/1000000)) MB)" "${T[mig500]}" "$v1b" "${R[mig500]}"
ssz=$(dirsize "$B/search-sessions")
row "search: first index build, 5,000 sessions" "${T[sbuild]}" "$ssz" "${R[sbuild]}"
row "search: warm query, 100 hits shown" "${T[swarm]}" "$ssz" "${R[swarm]}"
row "search: 10 sessions grew by 1 entry, query" "${T[supd]}" "$ssz" "${R[supd]}"
row "rg --json, same files and query" "${T[rg]}" "$ssz" "${R[rg]}"
echo
echo "append 10,000, no fsync: sessctl $app10 entries/s$([ $have_pi = 1 ] && echo "; pi $papp entries/s (ratio $(ratio "$app10" "$papp"))") (median of $RUNS)"
echo "append 100,000, no fsync: sessctl $app entries/s"
echo "append, fsync each:      sessctl $apps entries/s (2,000 entries)"
echo "search index: $((sidx/1000000)) MB for $((ssz/1000000)) MB of sessions; warm query $(ratio "${T[rg]}" "${T[swarm]}" | sed 's/x$//')x faster than rg --json"
echo "peak RSS / file size:  open + context $(awk -v r="${R[ctx]}" -v s="$big" 'BEGIN { printf "%.2f", r * 1024 / s }'), migrate $((v1/1000000)) MB $(awk -v r="${R[mig]}" -v s="$v1" 'BEGIN { printf "%.3f", r * 1024 / s }'), migrate $((v1b/1000000)) MB $(awk -v r="${R[mig500]}" -v s="$v1b" 'BEGIN { printf "%.3f", r * 1024 / s }')"
