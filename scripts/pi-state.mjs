// pi-state.mjs: print pi's view of a session file, for interop checks.
//
// Usage: node pi-state.mjs NODE_MODULES FILE...
//
// NODE_MODULES is a folder where pi was npm-installed
// (scripts/pi-install.sh; never inside this repository). Each FILE is copied to a
// temporary directory first, because pi rewrites files it migrates and
// truncates files it considers corrupt. One JSON line per file:
// {file, leafId, branch, entries, name, context}.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, ...files] = process.argv.slice(2);
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(path.join(modules, "node_modules"), s, "pi-coding-agent"))) ?? "@earendil-works";
const sm = path.join(modules, "node_modules", scope, "pi-coding-agent/dist/core/session-manager.js");
const { SessionManager } = await import(pathToFileURL(sm).href);
for (const src of files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-state-"));
  const copy = path.join(dir, path.basename(src));
  fs.copyFileSync(src, copy);
  const m = SessionManager.open(copy);
  const out = {
    file: src,
    leafId: m.getLeafId() ?? null,
    branch: m.getBranch().map((e) => e.id),
    entries: m.getEntries().length,
    name: m.getSessionName() ?? null,
    context: m.buildSessionContext(),
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  fs.rmSync(dir, { recursive: true });
}
