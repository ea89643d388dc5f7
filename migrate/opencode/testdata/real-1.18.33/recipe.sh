#!/usr/bin/env bash
# recipe.sh: regenerate a real opencode data directory (opencode.db and
# storage/) without a model and without network access.
#
# opencode itself writes every record: it is installed from npm, runs in an
# isolated HOME/XDG tree, and talks to a canned OpenAI-compatible server on
# loopback (written below) instead of a model. The sessions are driven with
# `opencode run` and with the HTTP API of `opencode serve`; the result is
# copied, home paths are replaced by /home/user, and the database is
# checkpointed and vacuumed. The rows of the event table (opencode's own
# event log, about a third of the file, which the importer does not read)
# are deleted; every other table is kept as opencode wrote it.
#
# Needs: node/npm, python3, curl, git. Usage: recipe.sh [OUTDIR]
# OUTDIR defaults to opencode-data/ beside this script, the copy the tests
# read. Environment: OPENCODE_VERSION (default 1.18.33), OPENCODE_WORK
# (default /tmp/opencode-work: npm prefix and scratch run directory).
set -euo pipefail

VERSION=${OPENCODE_VERSION:-1.18.33}
W=${OPENCODE_WORK:-/tmp/opencode-work}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/opencode-data}
RUN=$W/run
PLACEHOLDER_HOME=/home/user

# 1. opencode from npm (the package ships the binary).
npm install --prefix "$W/npm" --no-save --no-audit --no-fund "opencode-ai@$VERSION" >/dev/null
OC=$W/npm/node_modules/.bin/opencode
"$OC" --version >/dev/null

# 2. A fresh isolated tree: nothing reads or writes the real home.
rm -rf "$RUN"
mkdir -p "$RUN"
export HOME=$RUN/home
export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config
export XDG_CACHE_HOME=$HOME/.cache XDG_STATE_HOME=$HOME/.local/state
export OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1
unset OPENCODE_DB OPENCODE_CONFIG OPENCODE_CONFIG_CONTENT OPENCODE_CONFIG_DIR
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME/opencode" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"

PROJ=$HOME/work/app
mkdir -p "$PROJ"
printf 'hello opencode\n' >"$PROJ/hello.txt"
python3 -c 'import base64,sys; sys.stdout.buffer.write(base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="))' >"$PROJ/pixel.png"
(
  cd "$PROJ"
  export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
  git init -q
  git add hello.txt
  git -c user.name=User -c user.email=user@example.com commit -qm init
)

# 3. The canned model: OpenAI chat completions, streamed, on loopback.
cat >"$RUN/stub.py" <<'PY'
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def text_of(c):
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
    return ""

def plan(req):
    msgs = req.get("messages", [])
    system = "\n".join(text_of(m.get("content")) for m in msgs if m.get("role") == "system")
    last = msgs[-1] if msgs else {}
    user = text_of(last.get("content")).strip().strip('"')
    if system.startswith("You are a title generator"):
        return {"text": " ".join(user.replace(":", "").split()[:5]).capitalize()}
    if "summarization agent" in system:
        return {"text": "## Summary\nThe user and the agent inspected the project; nothing is pending."}
    if last.get("role") == "tool":
        return {"reasoning": "The tool returned; report it.",
                "text": "Done. The tool said:\n" + text_of(last.get("content"))[:200]}
    if "SUBAGENT" in user:
        return {"reasoning": "Look around as asked.", "text": "Subagent report: one file, hello.txt."}
    if user.startswith("BASH"):
        return {"reasoning": "I should run a shell command.",
                "tool": ("bash", {"command": "ls", "description": "List files in the project"})}
    if user.startswith("READ "):
        return {"reasoning": "I should read the file.",
                "tool": ("read", {"filePath": user.split()[1]})}
    if user.startswith("TASK"):
        return {"reasoning": "Delegate to a subagent.",
                "tool": ("task", {"description": "Explore project", "subagent_type": "general",
                                  "prompt": "SUBAGENT: look around the project and report"})}
    return {"reasoning": "A plain question; answer directly.",
            "text": "Hello from the stub model. You said: " + user[:100]}

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    n = 0
    def log_message(self, *a):
        pass
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        p = plan(req)
        H.n += 1
        cid = "chatcmpl-stub%d" % H.n
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        def chunk(delta, finish=None, usage=None):
            c = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                 "model": "stub-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                c["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.flush()
        chunk({"role": "assistant", "content": ""})
        if p.get("reasoning"):
            chunk({"reasoning_content": p["reasoning"]})
        t = p.get("text", "")
        for i in range(0, len(t), 40):
            chunk({"content": t[i:i + 40]})
        finish = "stop"
        if p.get("tool"):
            name, args = p["tool"]
            chunk({"tool_calls": [{"index": 0, "id": "call_stub%d" % H.n, "type": "function",
                                   "function": {"name": name, "arguments": json.dumps(args)}}]})
            finish = "tool_calls"
        chunk({}, finish, {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                           "prompt_tokens_details": {"cached_tokens": 20},
                           "completion_tokens_details": {"reasoning_tokens": 8}})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
PY

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

python3 "$RUN/stub.py" >"$RUN/stub.port" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$RUN/stub.port" ] && break; sleep 0.1; done
STUB_PORT=$(cat "$RUN/stub.port")

cat >"$XDG_CONFIG_HOME/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "stub/stub-model",
  "small_model": "stub/stub-model",
  "provider": {
    "stub": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Local stub",
      "options": { "baseURL": "http://127.0.0.1:$STUB_PORT/v1", "apiKey": "stub" },
      "models": { "stub-model": { "name": "Stub model", "reasoning": true, "tool_call": true,
                                  "limit": { "context": 100000, "output": 4096 } },
                  "stub-model-2": { "name": "Second stub model", "reasoning": true, "tool_call": true,
                                    "limit": { "context": 100000, "output": 4096 } } }
    }
  }
}
EOF

sid() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["sessionID"])' "$1"; }
cd "$PROJ"

# 4a. `opencode run`: a plain turn; a tool loop over three turns (bash, a
# read that works, a read that fails); a subagent (child session); an image.
"$OC" run Say hello >/dev/null
"$OC" run --auto --format json BASH: list the files here >"$RUN/run.json"
S=$(sid "$RUN/run.json")
"$OC" run --auto -s "$S" READ "$PROJ/hello.txt" >/dev/null
"$OC" run --auto -s "$S" READ "$PROJ/missing.txt" >/dev/null
"$OC" run --auto TASK: explore this project with a subagent >/dev/null
"$OC" run "What is in this image?" -f pixel.png >/dev/null

# 4b. `opencode serve`: a reply-less note, a user shell command, a prompt,
# a compaction, two more turns, a pending revert of the last one, a fork,
# and one session through the v2 API (stored in session_message).
SRV_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$OC" serve --port "$SRV_PORT" >"$RUN/serve.log" 2>&1 &
PIDS+=($!)
B=http://127.0.0.1:$SRV_PORT
for _ in $(seq 100); do curl -sf -m 5 "$B/doc" >/dev/null && break; sleep 0.2; done
Q="?directory=$PROJ"
post() { curl -sf -m 120 -X POST "$B$1" -H 'content-type: application/json' -d "$2"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

S=$(post "/session$Q" '{"title":"Served session"}' | field 'd["id"]')
post "/session/$S/message$Q" '{"noReply":true,"parts":[{"type":"text","text":"A note that gets no reply."}]}' >/dev/null
post "/session/$S/shell$Q" '{"agent":"build","command":"cat hello.txt"}' >/dev/null
post "/session/$S/message$Q" '{"parts":[{"type":"text","text":"What did the shell print?"}]}' >/dev/null
post "/session/$S/summarize$Q" '{"providerID":"stub","modelID":"stub-model"}' >/dev/null
KEEP=$(post "/session/$S/message$Q" '{"parts":[{"type":"text","text":"After the compaction: still there?"}]}' | field 'd["info"]["parentID"]')
LAST=$(post "/session/$S/message$Q" '{"parts":[{"type":"text","text":"This turn will be reverted."}]}' | field 'd["info"]["parentID"]')
post "/session/$S/revert$Q" "{\"messageID\":\"$LAST\"}" >/dev/null
post "/session/$S/fork$Q" "{\"messageID\":\"$KEEP\"}" >/dev/null

V=$(post /api/session "{\"location\":{\"directory\":\"$PROJ\"}}" | field 'd["data"]["id"]')
v2wait() { # until the newest v2 message is an assistant that stopped or failed
  for _ in $(seq 150); do
    curl -sf -m 10 "$B/api/session/$V/message" | python3 -c '
import json,sys
d=json.load(sys.stdin); d=d.get("data", d); d=d.get("items", d) if isinstance(d, dict) else d
d=sorted(d, key=lambda x: (x.get("time", {}).get("created", 0), x.get("id", "")))
sys.exit(0 if d and d[-1].get("type")=="assistant" and d[-1].get("finish") in ("stop", "error") else 1)' && return 0
    sleep 0.2
  done
  return 1
}
post "/api/session/$V/prompt" '{"prompt":{"text":"Hello through the v2 API"}}' >/dev/null
v2wait
post "/api/session/$V/prompt" '{"prompt":{"text":"BASH through the v2 API"}}' >/dev/null
sleep 1
v2wait
# v2: a model switch and an agent switch, each with a turn after it, and
# last an image attachment, which this opencode's v2 prompt path passes on
# unread: the turn ends in an error (kept on purpose; every later turn
# would fail the same way). POST /api/session/:id/compact returns 204 but
# writes nothing in 1.18.33, so the v2 store has no compaction here.
post "/api/session/$V/model" '{"model":{"id":"stub-model-2","providerID":"stub"}}' >/dev/null || true
post "/api/session/$V/prompt" '{"prompt":{"text":"After the model switch"}}' >/dev/null
sleep 1
v2wait
post "/api/session/$V/agent" '{"agent":"plan"}' >/dev/null || true
post "/api/session/$V/prompt" '{"prompt":{"text":"After the agent switch"}}' >/dev/null
sleep 1
v2wait
post "/api/session/$V/prompt" "{\"prompt\":{\"text\":\"What is in this image?\",\"files\":[{\"uri\":\"file://$PROJ/pixel.png\",\"name\":\"pixel.png\"}]}}" >/dev/null
sleep 1
v2wait
cleanup
PIDS=()
wait 2>/dev/null || true

# 5. Copy and scrub: home paths -> /home/user, the scratch tree -> /tmp/run,
# the host name -> host; checkpoint the WAL into the file and vacuum.
DATA=$XDG_DATA_HOME/opencode
rm -rf "$OUT"
mkdir -p "$OUT"
cp "$DATA"/opencode.db* "$OUT"/
cp -r "$DATA/storage" "$OUT/storage"
python3 - "$OUT" "$HOME" "$RUN" "$PLACEHOLDER_HOME" "$(hostname)" <<'PY'
import os, sqlite3, sys
out, home, run, ph, host = sys.argv[1:]
subs = [(home, ph), (run, "/tmp/run")] + ([(host, "host")] if len(host) > 3 else [])
def scrub(s):
    for a, b in subs:
        s = s.replace(a, b)
    return s
db = sqlite3.connect(os.path.join(out, "opencode.db"))
tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
for t in tables:
    cols = [r[1] for r in db.execute(f'pragma table_info("{t}")')]
    for c in cols:
        rows = db.execute(f'select rowid, "{c}" from "{t}" where typeof("{c}")=\'text\'').fetchall()
        for rowid, v in rows:
            if scrub(v) != v:
                db.execute(f'update "{t}" set "{c}"=? where rowid=?', (scrub(v), rowid))
db.execute("delete from event")
db.commit()
db.execute("pragma wal_checkpoint(TRUNCATE)")
db.execute("vacuum")
db.close()
for d, _, files in os.walk(os.path.join(out, "storage")):
    for f in files:
        p = os.path.join(d, f)
        s = open(p, encoding="utf-8").read()
        open(p, "w", encoding="utf-8").write(scrub(s))
PY
rm -f "$OUT"/opencode.db-wal "$OUT"/opencode.db-shm
if grep -rqaF -e "$RUN" -e "$W" "$OUT"; then echo "recipe: unscrubbed path left in $OUT" >&2; exit 1; fi
echo "opencode $("$OC" --version): store in $OUT"
