#!/usr/bin/env bash
# pi-interop.sh: check that files written by sessctl load in pi (the
# reference release, 0.73.1) with the same leaf, branch, name and context
# as sessctl computes.
#
# Usage: scripts/pi-interop.sh NODE_MODULES [FILE...]
#
# NODE_MODULES is a folder outside the repository where pi was
# npm-installed (scripts/pi-install.sh 0.73.1 prints it). Without FILEs, the script builds sessctl and checks a demo
# session, generated sessions (with branches, labels, names, compactions
# and images), the sessions of the example agent (examples/agent) and a
# version 1 file migrated by sessctl (against pi's own migration of the
# original). Not part of `make test`: it needs Node.
set -euo pipefail
mods=$(cd "$1" && pwd); shift
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/sessctl" "$root/cmd/sessctl"
go build -o "$work/sessctl-bench" "$root/cmd/sessctl-bench"
S="$work/sessctl"
G="$work/sessctl-bench"
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  "$G" gen session --entries 3000 --seed 7 "$work/gen.jsonl" >/dev/null
  "$G" gen session --entries 20000 --seed 8 "$work/gen-big.jsonl" >/dev/null
  "$G" gen session --entries 2000 --seed 9 --v1 "$work/v1.jsonl" >/dev/null
  cp "$work/v1.jsonl" "$work/v1-orig.jsonl"
  "$S" migrate "$work/v1.jsonl" >/dev/null
  # A session written through the engine API (appends, a label, a branch
  # with summary, a name).
  store=$("$S" demo --keep | sed -n 's/^The store is kept at //p')
  demo=$(find "$store" -name '*.jsonl' | head -1)
  cp "$demo" "$work/demo.jsonl"; rm -rf "$store"
  # The example agent's sessions (typed messages, compaction, branch
  # summary, a child session, a resume).
  mapfile -t example < <(cd "$root" && go run ./examples/agent "$work/example" | grep '\.jsonl$')
  files=("$work/demo.jsonl" "$work/gen.jsonl" "$work/gen-big.jsonl" "$work/v1.jsonl" "${example[@]}")
fi
fail=0
for f in "${files[@]}"; do
  node "$root/scripts/pi-state.mjs" "$mods" "$f" > "$work/pi.json"
  "$S" dump --fields leafId,branch,entries,sessionName,context "$f" > "$work/ours.json"
  if python3 - "$work/pi.json" "$work/ours.json" <<'PY'
import json, sys
pi = json.load(open(sys.argv[1])); ours = json.load(open(sys.argv[2]))
checks = {
  "leafId": (pi["leafId"], ours["leafId"]),
  "branch": (pi["branch"], ours["branch"]),
  "entries": (pi["entries"], len(ours["entries"])),
  "name": (pi["name"], ours["sessionName"]),
  "context": (pi["context"], ours["context"]),
}
bad = [k for k, (a, b) in checks.items() if a != b]
print(("FAIL " + ",".join(bad)) if bad else "ok", pi["file"], "leaf", pi["leafId"], "messages", len(pi["context"]["messages"]))
sys.exit(1 if bad else 0)
PY
  then :; else fail=1; fi
done
# A v1 file migrated by sessctl gives pi the same context as pi's own
# migration of the original (ids differ: pi draws them at random).
if [ -f "$work/v1-orig.jsonl" ]; then
  node "$root/scripts/pi-state.mjs" "$mods" "$work/v1-orig.jsonl" > "$work/pi-own.json"
  node "$root/scripts/pi-state.mjs" "$mods" "$work/v1.jsonl" > "$work/pi-ours.json"
  python3 - "$work/pi-own.json" "$work/pi-ours.json" <<'PY' || fail=1
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
def strip(ctx):
    for m in ctx["messages"]:
        m.pop("fromId", None)
    return ctx
ok = strip(a["context"]) == strip(b["context"]) and a["entries"] == b["entries"] and len(a["branch"]) == len(b["branch"])
print("ok" if ok else "FAIL", "v1 migrated by sessctl vs by pi:", a["entries"], "entries,", len(a["context"]["messages"]), "context messages")
sys.exit(0 if ok else 1)
PY
fi
exit $fail
