#!/usr/bin/env bash
# bench-scale.sh: the real-size part of `make bench` (issue 35): a store of
# 50,000 sessions (4 GB) over 40 cwds and single sessions of 400 MB and
# 1 GB, written by pi's own SessionManager (scripts/scale-gen.mjs, seeded;
# no code of sessctl's makes these bytes), generated once into a cache
# outside the repository and kept. sessctl and pi 0.73.1 are timed on the
# same files, whole processes, warm page cache, medians of RUNS with the
# spread; the load average is printed with every row.
#
#   SCALE_DIR       where the workloads are kept
#                   (default ${XDG_CACHE_HOME:-~/.cache}/sessctl/bench)
#   SCALE_PI        folder where pi 0.73.1 is npm-installed: it writes the
#                   workloads (needed) and is timed beside sessctl
#                   (default ~/.cache/sessctl/pi-0.73.1)
#   RUNS            runs per measurement (default 3)
#   SCALE_SESSIONS (50000), SCALE_CWDS (40), SCALE_MEAN (59000: the
#                   generator's mean target size; the files come out at
#                   about 80 KB on average, the target plus the turn that
#                   crosses it), SCALE_BIG (400000000 1000000000: the
#                   single sessions' sizes in bytes)
#   SCALE_GEN_ONLY  set to 1 to generate the workloads and stop
#   SCALE_SESSCTL   a sessctl binary to measure instead of one built here
#   SCALE_PIBENCH   set to 0 to leave pi out; SEARCHBENCH=0 leaves search out
#   SCALE_SEARCH_ONLY set to 1 to run only the search rows on the store
#   SCALE_ENGINES   the search engines measured (default "own fts5")
#   SCALE_PI_MAX_MB skip pi where its peak memory would pass this
#                   (default 12000)
#   SCALE_SYNC      set to 0 to leave out sync push/pull of the single
#                   sessions (they run against MinIO on loopback, at
#                   $SESSCTL_MINIO or where scripts/minio.sh installs it;
#                   skipped with a message when it is not there)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cache=${XDG_CACHE_HOME:-$HOME/.cache}
SD=${SCALE_DIR:-$cache/sessctl/bench}
PIM=${SCALE_PI:-$HOME/.cache/sessctl/pi-0.73.1}
RUNS=${RUNS:-3}
SCALE_SESSIONS=${SCALE_SESSIONS:-50000}
SCALE_CWDS=${SCALE_CWDS:-40}
SCALE_MEAN=${SCALE_MEAN:-59000}
SCALE_BIG=${SCALE_BIG-400000000 1000000000}
SCALE_ENGINES=${SCALE_ENGINES:-own fts5}
MINIO_BIN=${SESSCTL_MINIO:-${SESSCTL_CACHE:-$cache/sessctl}/bin/minio}
say() { printf '%s\n' "$*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

[ -d "$PIM/node_modules/@mariozechner/pi-coding-agent" ] || {
  say "bench-scale: pi is not installed in $PIM (scripts/pi-install.sh 0.73.1 \"$PIM\"); it writes the workloads"
  exit 1
}
mkdir -p "$SD"
SD=$(cd "$SD" && pwd)

# gen NAME CMD...: runs the generator into $SD/NAME, marked complete at
# the end: a workload interrupted halfway is made again. (Written in place,
# not renamed: a child session's header holds its parent's path.)
gen() {
  local name=$1; shift
  [ -f "$SD/$name/complete" ] && return 0
  rm -rf "${SD:?}/$name"
  mkdir -p "$SD/$name"
  say "bench-scale: generating $name (once; kept in $SD) at load $(load)"
  local t0=$SECONDS
  nice node --max-old-space-size=8192 scripts/scale-gen.mjs "$PIM" "$@" > "$SD/$name/gen.out"
  # Files modified in the last 2 s are never cached: let the last ones age.
  sleep 3
  touch "$SD/$name/complete"
  say "bench-scale: $name took $((SECONDS - t0)) s: $(cat "$SD/$name/gen.out")"
}
STORE=store-s1-n$SCALE_SESSIONS-c$SCALE_CWDS-m$SCALE_MEAN
gen "$STORE" store "$SD/$STORE/agent" 1 "$SCALE_SESSIONS" "$SCALE_CWDS" "$SCALE_MEAN"
BIGS=()
seed=2
for b in $SCALE_BIG; do
  gen "session-s$seed-$b" session "$SD/session-s$seed-$b/session" "$seed" "$b"
  BIGS+=("$(find "$SD/session-s$seed-$b/session" -name '*.jsonl' | head -1)")
  seed=$((seed + 1))
done
[ "${SCALE_GEN_ONLY:-0}" = 1 ] && exit 0

AGENT="$SD/$STORE/agent"
SESS="$AGENT/sessions"
# sessctl's caches (list, offset, stats and search indexes) go to a cache
# folder of the run, beside the workloads; never to the user's.
export XDG_CACHE_HOME="$SD/run-cache"
C="$XDG_CACHE_HOME/sessctl"
mkdir -p "$XDG_CACHE_HOME"
W="$SD/run"   # scratch: timings, outputs, forks
rm -rf "$W"
mkdir -p "$W"
S=${SCALE_SESSCTL:-$W/sessctl}
D="$W/sessctl-bench"
[ -n "${SCALE_SESSCTL:-}" ] || go build -o "$S" ./cmd/sessctl
go build -o "$D" ./cmd/sessctl-bench
P=(node "$root/scripts/pi-bench.mjs" "$PIM")
PI_MAX_MB=${SCALE_PI_MAX_MB:-12000}

# stats: numbers, one a line -> "median min max" (lower middle of an even
# count).
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

# measure N PREP CMD...: runs PREP (untimed) then CMD, N times; prints
# "median min max rss-of-the-median-run max-rss load" (seconds, KiB, the
# 1-minute load average before the first run). A failing CMD prints
# "fail" and its stderr's last line instead.
measure() {
  local n=$1 prep=$2; shift 2
  local t0 t1 m i l
  l=$(cut -d' ' -f1 /proc/loadavg)
  : > "$W/runs.txt"
  for i in $(seq "$n"); do
    eval "$prep"
    t0=$(date +%s%N)
    if ! /usr/bin/time -f '%M %U %S' -o "$W/time.out" "$@" > "$W/stdout.out" 2> "$W/stderr.out"; then
      echo "fail $(grep -v 'Command exited' "$W/stderr.out" | tail -1 | tr ' ' '_' | cut -c1-160)"
      return 0
    fi
    t1=$(date +%s%N)
    read -r m u s < "$W/time.out"
    awk -v d=$((t1 - t0)) -v m="$m" -v c="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" 'BEGIN { printf "%.3f %d %.2f\n", d / 1e9, m, c }' >> "$W/runs.txt"
  done
  read -r med lo hi < <(cut -d' ' -f1 "$W/runs.txt" | stats)
  read -r cmed clo chi < <(cut -d' ' -f3 "$W/runs.txt" | stats)
  printf '%s %s %s %s %s %s %s %s %s\n' "$med" "$lo" "$hi" \
    "$(awk -v t="$med" '$1 == t { print $2; exit }' "$W/runs.txt")" "$(cut -d' ' -f2 "$W/runs.txt" | sort -n | tail -1)" "$l" "$cmed" "$clo" "$chi"
}

declare -A T T0 T1 R RX L U U0 U1
# run KEY N PREP CMD...: measure into T (median), T0-T1 (spread), R (RSS
# of the median run), RX (largest RSS), L (load), U and U0-U1 (CPU
# seconds, user + system: median and spread); a failure leaves T[KEY]
# as "fail" and the reason in R[KEY].
run() {
  local k=$1; shift
  local out
  out=$(measure "$@")
  if [ "${out%% *}" = fail ]; then
    T[$k]=fail R[$k]=${out#fail }
    say "  $k: failed: ${R[$k]//_/ }"
    return 0
  fi
  read -r T[$k] T0[$k] T1[$k] R[$k] RX[$k] L[$k] U[$k] U0[$k] U1[$k] <<< "$out"
  say "  $k: ${T[$k]} s (${T0[$k]}-${T1[$k]}), CPU ${U[$k]} s (${U0[$k]}-${U1[$k]}), $((${R[$k]} / 1024)) MiB, load ${L[$k]}"
}
# skip KEY REASON: a row not measured, and why.
skip() { T[$1]=skip R[$1]=$2; say "  $1: skipped: $2"; }
rmcache() { rm -rf "$C/$1"; }

say "== scale: store of $SCALE_SESSIONS sessions ($(du -sb "$SESS" | cut -f1) bytes), load $(load)"
export PI_CODING_AGENT_DIR="$AGENT"
if [ "${SCALE_SEARCH_ONLY:-0}" != 1 ]; then
  run cat "$RUNS" : sh -c 'find "$1" -name "*.jsonl" -print0 | xargs -0 cat > /dev/null' sh "$SESS"
  run lsno "$RUNS" : "$S" list --all --no-index
  run lsfirst "$RUNS" "rmcache list-index" "$S" list --all
  run lswarm "$RUNS" : "$S" list --all
  run lsjson "$RUNS" : "$S" list --all --json
  # ContinueRecent in the busiest cwd: in process (the call) and the process.
  BUSY=$(for d in "$SESS"/*/; do echo "$(ls "$d" | wc -l) $d"; done | sort -n | tail -1 | cut -d' ' -f2-)
  BUSYN=$(ls "$BUSY" | wc -l)
  BUSYCWD=$(head -1 "$(ls -d "$BUSY"* | head -1)" | sed 's/.*"cwd":"\([^"]*\)".*/\1/')
  run recent "$RUNS" : "$D" recent "$BUSYCWD"
  : > "$W/recent-ms.txt"
  for _ in $(seq "$RUNS"); do "$D" recent "$BUSYCWD" | sed 's/.*: \([0-9.]*\) ms/\1/' >> "$W/recent-ms.txt"; done
  read -r RMS RMS0 RMS1 < <(stats < "$W/recent-ms.txt")
  say "  recent in process ($BUSYN sessions in the cwd): $RMS ms ($RMS0-$RMS1)"
  run strfirst "$RUNS" "rmcache stats-index" "$S" stats --all
  run stwarm "$RUNS" : "$S" stats --all
fi
if [ "${SEARCHBENCH:-1}" != 0 ]; then
  # The query: three words the generator puts into one session in 400,
  # 600 and 900.
  SQ='quokkaPipeline OR marmosetCache OR wombatSchema'
  # Issue 44's rows, for both engines in one run beside rg on the same
  # files: the first build (MB/s, MB per CPU-second, RSS, index size), a
  # rare word and a common word with --limit 20 in a new process, a rare
  # word appended to one session just before the query (fresh: the run
  # fails when the query does not find every line appended so far), and
  # one line appended to each of 100 sessions, then a query that finds
  # the 100. The appended sessions are restored (bytes and times) after.
  SRARE=${SCALE_RARE:-wombatSchema}
  SCOMMON=${SCALE_COMMON:-file}
  sbytes=$(du -sb "$SESS" | cut -f1)
  mapfile -t SFILES < <(find "$SESS" -name '*.jsonl' | sort | awk 'NR % 97 == 1' | head -100)
  mkdir -p "$W/orig"
  for f in "${SFILES[@]}"; do cp -p "$f" "$W/orig/$(printf '%s' "$f" | sha1sum | cut -c1-16)"; done
  restore_appended() {
    for f in "${SFILES[@]}"; do cp -p "$W/orig/$(printf '%s' "$f" | sha1sum | cut -c1-16)" "$f"; done
  }
  # append WORD FILE...: one user message holding WORD at the end of each
  # FILE, parented on its last entry, as pi appends one.
  append() {
    local w=$1 f id; shift
    for f in "$@"; do
      id=$(tail -c 4096 "$f" | tail -1 | sed -n 's/^{"type":"[a-z_]*","id":"\([^"]*\)".*/\1/p')
      printf '{"type":"message","id":"%08x","parentId":"%s","timestamp":"2026-12-02T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"appended %s just now"}],"timestamp":1764633600000}}\n' \
        "$((RANDOM * 32768 + RANDOM))" "$id" "$w" >> "$f"
    done
  }
  fresh_n=0
  fresh_word=kiwiFreshword
  fresh_prep() { fresh_n=$((fresh_n + 1)); append "$fresh_word" "${SFILES[$((fresh_n % ${#SFILES[@]}))]}"; }
  # hits KEY WANT: the last query of KEY printed WANT hits (text output:
  # one "sessctl show --leaf ID FILE" line a hit), or the row is marked
  # failed.
  hits() {
    local got
    got=$(grep -c '^    sessctl show --leaf ' "$W/stdout.out" || true)
    [ "$got" = "$2" ] || { T[$1]=fail R[$1]="found_${got}_of_$2_appended_lines"; say "  $1: FAILED: found $got of the $2 appended lines"; }
  }
  for E in $SCALE_ENGINES; do
    SE=("$S" search --engine "$E" --store "$SESS")
    run "sbuild-$E" 1 "rmcache search" "${SE[@]}" --limit 100 "$SQ"
    sidx=$(du -sb "$C/search" | cut -f1)
    say "  sbuild-$E: $(awk -v b="$sbytes" -v t="${T[sbuild-$E]}" -v u="${U[sbuild-$E]}" 'BEGIN { printf "%.1f MB/s, %.1f MB per CPU-second", b / 1e6 / t, b / 1e6 / u }'), index $sidx bytes ($(awk -v a="$sidx" -v b="$sbytes" 'BEGIN { printf "%.3f", a / b }')x the session bytes)"
    run "swarm-$E" "$RUNS" : "${SE[@]}" --limit 100 "$SQ"
    run "srare-$E" "$RUNS" : "${SE[@]}" --limit 20 "$SRARE"
    run "scommon-$E" "$RUNS" : "${SE[@]}" --limit 20 "$SCOMMON"
    fresh_n=0
    run "sfresh-$E" "$RUNS" fresh_prep "${SE[@]}" --limit 1000 kiwiFreshword
    hits "sfresh-$E" "$RUNS"
    restore_appended
    run "supd100-$E" 1 "append kiwiHundredword \"\${SFILES[@]}\"" "${SE[@]}" --limit 1000 kiwiHundredword
    hits "supd100-$E" "${#SFILES[@]}"
    restore_appended
    "${SE[@]}" --limit 1 "$SRARE" > /dev/null || true
  done
  run swarm "$RUNS" : "$S" search --store "$SESS" --limit 100 "$SQ"
  if command -v rg > /dev/null; then
    run rgrare "$RUNS" : sh -c 'rg -c "$1" "$2" > /dev/null; [ $? -le 1 ]' rg "$SRARE" "$SESS"
    run rgcommon "$RUNS" : sh -c 'rg "$1" "$2" > /dev/null; [ $? -le 1 ]' rg "$SCOMMON" "$SESS"
    for E in $SCALE_ENGINES; do
      say "  ratios $E: rare $(awk -v a="${T[srare-$E]}" -v b="${T[rgrare]}" 'BEGIN { printf "%.3f", a / b }')x rg, common --limit 20 $(awk -v a="${T[scommon-$E]}" -v b="${T[rgcommon]}" 'BEGIN { printf "%.3f", a / b }')x rg"
    done
  else
    say "  rg: skipped: ripgrep is not installed (apt-get install ripgrep)"
  fi
  # The same query through a resident process: sessctl serve keeps its
  # index open with a watch on the store (search.Options.Watch). The
  # search page is fetched once (the walk), then timed RUNS times; then
  # the server's CPU time over SCALE_IDLE seconds (default 60) of idling.
  if command -v curl > /dev/null; then
    "$S" serve --store "$SESS" > "$W/serve.out" 2> "$W/serve.err" &
    spid=$!
    url=
    for _ in $(seq 100); do
      url=$(grep -o 'http://[^ ]*' "$W/serve.out" | head -1 || true)
      [ -n "$url" ] && break
      sleep 0.1
    done
    base=${url%%/\?token=*}
    jar="$W/serve.cookies"
    rm -f "$jar"
    curl -s -c "$jar" -b "$jar" "$url" > /dev/null
    sq=$(printf '%s' "$SQ" | sed 's/ /+/g')
    curl -s -c "$jar" -b "$jar" "$base/search?q=$sq" > /dev/null
    run sserve "$RUNS" : curl -s -f -c "$jar" -b "$jar" -o "$W/serve.page" "$base/search?q=$sq"
    say "  sserve: $(grep -c 'class="hit"' "$W/serve.page") hits on the page"
    # A new process per query, answered by the serve over its private
    # socket (sessctl search asks a serve of the same stores by itself):
    # a rare word, then a word appended just before each query; the
    # server's CPU per query from /proc/PID/stat.
    ticks() { awk '{ print $14 + $15 }' "/proc/$spid/stat"; }
    "$S" search --store "$SESS" --limit 1 "$SRARE" > /dev/null || true
    t0=$(ticks)
    run ssockrare "$RUNS" : "$S" search --store "$SESS" --limit 20 "$SRARE"
    t1=$(ticks)
    say "  ssockrare: the server's CPU $(awk -v d=$((t1 - t0)) -v n="$RUNS" -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", d / h / n }') s a query"
    fresh_n=0 fresh_word=kiwiSockword
    t0=$(ticks)
    run ssockfresh "$RUNS" fresh_prep "$S" search --store "$SESS" --limit 1000 kiwiSockword
    t1=$(ticks)
    hits ssockfresh "$RUNS"
    say "  ssockfresh: the server's CPU $(awk -v d=$((t1 - t0)) -v n="$RUNS" -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", d / h / n }') s a query"
    restore_appended
    "$S" search --store "$SESS" --limit 1 "$SRARE" > /dev/null || true # the restored files indexed again
    # One line appended to each of 100 sessions, then a new process's
    # query through the serve that finds them: every line appended so
    # far (100 a run), or the row fails.
    t0=$(ticks)
    run ssockupd100 "$RUNS" "append kiwiSockhundred \"\${SFILES[@]}\"" "$S" search --store "$SESS" --limit 1000 kiwiSockhundred
    t1=$(ticks)
    hits ssockupd100 $((RUNS * ${#SFILES[@]}))
    say "  ssockupd100: the server's CPU $(awk -v d=$((t1 - t0)) -v n="$RUNS" -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", d / h / n }') s a query"
    restore_appended
    t0=$(awk '{ print $14 + $15 }' "/proc/$spid/stat")
    sleep "${SCALE_IDLE:-60}"
    t1=$(awk '{ print $14 + $15 }' "/proc/$spid/stat")
    say "  sserve idle: $((t1 - t0)) ticks of CPU (1/$(getconf CLK_TCK) s each) in ${SCALE_IDLE:-60} s"
    kill -INT "$spid"
    wait "$spid" || true
  else
    say "  sserve: skipped: no curl"
  fi
fi
[ "${SCALE_SEARCH_ONLY:-0}" = 1 ] && exit 0
# pi 0.73.1: listAll of the whole store holds every file's text at once
# (4.5 GB for 4 GB here); continueRecent of the busiest cwd.
PLSALL=
if [ "${SCALE_PIBENCH:-1}" != 0 ]; then
  run plsall 1 : "${P[@]}" listall
  PLSALL=$(cat "$W/stdout.out" 2>/dev/null || true)
  say "  plsall: pi returned ${PLSALL:-nothing}"
  run precent "$RUNS" : "${P[@]}" recent "$BUSY"
fi

# sync push/pull of the single sessions, against MinIO on loopback, with
# the object store's own speed for the same bytes beside them (one object
# written and read in parts of 16 MiB, as sync's segments are: the floor).
have_minio=0
if [ "${SCALE_SYNC:-1}" = 0 ]; then
  :
elif [ -x "$MINIO_BIN" ]; then
  minio_out=$(SESSCTL_MINIO="$MINIO_BIN" scripts/minio.sh start)
  minio_pid=$(echo "$minio_out" | head -1 | sed 's/.*pid=\([0-9]*\).*/\1/')
  minio_dir=$(echo "$minio_out" | head -1 | sed 's/.*dir=\(.*\)$/\1/')
  trap 'kill "$minio_pid" 2>/dev/null; rm -rf "$minio_dir"' EXIT
  # shellcheck disable=SC2046
  export $(echo "$minio_out" | tail -1)
  "$D" mkbucket scale
  have_minio=1
else
  say "  sync rows skipped: no MinIO at $MINIO_BIN (scripts/minio.sh install)"
fi
nosync() { rm -rf "$C/sync"; }

for f in "${BIGS[@]}"; do
  sz=$(stat -c %s "$f")
  k=$((sz / 1000000))
  say "== scale: one session of $k MB, load $(load)"
  ixcold="rm -rf $C/offset-index"
  run "cat$k" "$RUNS" : cat "$f"
  for cmd in show "export --format md" "export --format json" "export --format html" stats "tail -n 10"; do
    key="${cmd%% *}"
    case "$cmd" in *md) key=md ;; *json) key=json ;; *html) key=html ;; esac
    # shellcheck disable=SC2086
    run "$key$k" "$RUNS" "$ixcold" "$S" $cmd "$f"
    # shellcheck disable=SC2086
    run "${key}w$k" "$RUNS" : "$S" $cmd "$f"
  done
  # fork: the branch into a new session of another cwd, in a store of
  # the run (not beside the workload).
  run "fork$k" "$RUNS" "rm -rf $W/fork-agent $C/offset-index" env PI_CODING_AGENT_DIR="$W/fork-agent" "$S" fork --cwd /tmp/forked "$f"
  rm -rf "$W/fork-agent"
  if [ "$have_minio" = 1 ]; then
    # A store of the one session (a hard link: nothing is written beside
    # the workload); each push goes to a new prefix with no sync state.
    rm -rf "$W/sync-a" "$W/sync-b"
    mkdir -p "$W/sync-a/sessions/--big--"
    ln "$f" "$W/sync-a/sessions/--big--/$(basename "$f")"
    run "push$k" "$RUNS" nosync sh -c 'exec "$1" sync push --remote "s3://scale/push-$(date +%s%N)" --store "$2"' push "$S" "$W/sync-a"
    nosync; "$S" sync push --remote "s3://scale/base$k" --store "$W/sync-a" > /dev/null
    run "pull$k" "$RUNS" "nosync; rm -rf $W/sync-b" "$S" sync pull --remote "s3://scale/base$k" --store "$W/sync-b"
    if cmp -s "$f" "$(ls "$W"/sync-b/sessions/*/*.jsonl)"; then
      say "  pull$k: restored byte for byte"
    else
      say "  pull$k: NOT restored byte for byte"
    fi
    run "put$k" "$RUNS" : "$D" put "scale/raw$k" "$f"
    run "get$k" "$RUNS" : "$D" get "scale/raw$k"
    rm -rf "$W/sync-a" "$W/sync-b"
  fi
  # pi reads a file as one string: V8 holds at most 2^29-24 characters.
  if [ "${SCALE_PIBENCH:-1}" = 0 ]; then
    :
  elif [ "$sz" -ge 536870888 ]; then
    skip "pctx$k" "pi reads the whole file into one string, and V8's strings hold at most 512 MiB (2^29-24 characters)"
    skip "phtml$k" "as above"
  else
    run "pctx$k" 1 : "${P[@]}" context "$f"
    run "phtml$k" 1 "rm -f $W/pi.html" "${P[@]}" html "$f" "$W/pi.html"
    rm -f "$W/pi.html"
  fi
done
