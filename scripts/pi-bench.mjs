// pi-bench.mjs: time pi's SessionManager (0.58.3 for scripts/bench.sh,
// 0.73.1 for scripts/bench-scale.sh) on sessctl's benchmark workloads, for
// BENCHMARKS.md.
//
// Usage: node pi-bench.mjs NODE_MODULES MODE ARGS...
//   context FILE     SessionManager.open(FILE) + buildSessionContext(), printed
//   list DIR         SessionManager.list(cwd, DIR), printed
//   append N DIR     create a session in DIR and appendMessage N messages
//                    (assistant and user in turn); prints entries/s of the
//                    loop. pi never fsyncs: each append is a synchronous
//                    appendFileSync of the JSON.stringify'd line.
//   open FILE        SessionManager.open(FILE): for a v1 file, pi migrates it
//                    in memory and rewrites the file (no backup, no fsync;
//                    run it on a copy)
//   listall          SessionManager.listAll() of the store in
//                    $PI_CODING_AGENT_DIR; prints how many sessions it
//                    returned and how many *.jsonl files the store holds
//                    (the list itself, hundreds of MB of JSON at 50,000
//                    sessions, is not printed)
//   recent DIR       SessionManager.continueRecent(cwd, DIR): prints the
//                    session file it opened
//   html FILE OUT    exportFromFile(FILE, OUT): pi's HTML export
//
// NODE_MODULES is a folder outside the repository where
// pi was npm-installed (`npm install @mariozechner/pi-coding-agent@0.58.3`) (see
// scripts/pi-install.sh). The append messages are the typed values
// cmd/sessctl-bench appends (message.NewAssistant, message.NewUser):
// the message objects of both files are the same bytes.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, mode, ...args] = process.argv.slice(2);
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(path.join(modules, "node_modules"), s, "pi-coding-agent"))) ?? "@earendil-works";
const sm = path.join(modules, "node_modules", scope, "pi-coding-agent/dist/core/session-manager.js");
const { SessionManager } = await import(pathToFileURL(sm).href);
const load = (rel) => import(pathToFileURL(path.join(modules, "node_modules", scope, "pi-coding-agent/dist", rel)).href);

const user = {"role":"user","content":"Run the tests again and tell me which package fails, and why; then propose the smallest fix that keeps the public API as it is.","timestamp":1772355600000};
const assistant = {"role":"assistant","content":[{"type":"thinking","thinking":"The failing package is layout: codec.go uses utf16 without importing it. The smallest fix adds the import."},{"type":"text","text":"layout fails to build: codec.go calls utf16.Encode but does not import unicode/utf16. Adding the import fixes it; nothing else changes."},{"type":"toolCall","id":"toolu_01","name":"edit","arguments":{"path":"layout/codec.go","oldText":"import (","newText":"import (\n\t\"unicode/utf16\""}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":12040,"output":180,"cacheRead":8000,"cacheWrite":0,"totalTokens":20220,"cost":{"input":0.03612,"output":0.0027,"cacheRead":0.0024,"cacheWrite":0,"total":0.04122}},"stopReason":"toolUse","timestamp":1772355601000};

switch (mode) {
  case "context": {
    const m = SessionManager.open(args[0]);
    process.stdout.write(JSON.stringify(m.buildSessionContext()) + "\n");
    break;
  }
  case "list": {
    const list = await SessionManager.list("/home/dev/project", args[0]);
    process.stdout.write(JSON.stringify(list) + "\n");
    break;
  }
  case "append": {
    const n = Number(args[0]);
    const m = SessionManager.create("/home/dev/project", args[1]);
    const start = performance.now();
    for (let i = 0; i < n; i++) m.appendMessage(i % 2 === 0 ? assistant : user);
    const s = (performance.now() - start) / 1000;
    process.stdout.write(`${n} entries in ${Math.round(s * 1000)}ms: ${Math.round(n / s)} entries/s\n`);
    break;
  }
  case "open": {
    const m = SessionManager.open(args[0]);
    process.stdout.write(`${m.getEntries().length} entries\n`);
    break;
  }
  case "listall": {
    const list = await SessionManager.listAll();
    const { readdirSync } = await import("node:fs");
    const root = path.join(process.env.PI_CODING_AGENT_DIR, "sessions");
    let files = 0;
    for (const d of readdirSync(root)) files += readdirSync(path.join(root, d)).filter((f) => f.endsWith(".jsonl")).length;
    process.stdout.write(`${list.length} sessions listed of ${files} files\n`);
    break;
  }
  case "recent": {
    const m = SessionManager.continueRecent("/home/dev/project", args[0]);
    process.stdout.write(`${m.getSessionFile()}\n`);
    break;
  }
  case "html": {
    const { exportFromFile } = await load("core/export-html/index.js");
    process.stdout.write(`${await exportFromFile(args[0], args[1])}\n`);
    break;
  }
  default:
    throw new Error(`unknown mode ${mode}`);
}
