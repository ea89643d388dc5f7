// pi-writer.mjs: pi writing beside sessctl, for the concurrent-writer test
// (engine's TestLabelsBesideARunningPi). It opens a session with pi's
// own SessionManager (the reference release) and appends tool results of SIZE bytes in a
// loop, for SECONDS or COUNT entries, whichever comes first, printing each
// entry id on stdout as soon as pi has written it.
//
// Usage: node pi-writer.mjs NODE_MODULES FILE SECONDS COUNT SIZE [INTERVAL_MS]
//
// INTERVAL_MS, when given, is a pause after each entry (replica's
// TestPiBesideSync: pi appending every 30 ms while sync loops).
//
// NODE_MODULES is the folder where pi was
// npm-installed (scripts/pi-install.sh), or its node_modules. The
// session must already hold a user or assistant message: pi writes
// nothing before one.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, file, seconds, count, size, interval] = process.argv.slice(2);
if (!size) {
	console.error("usage: node pi-writer.mjs NODE_MODULES FILE SECONDS COUNT SIZE");
	process.exit(2);
}
const modules = fs.existsSync(path.join(nodeModules, "node_modules")) ? path.join(nodeModules, "node_modules") : nodeModules;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const sm = path.join(modules, scope, "pi-coding-agent/dist/core/session-manager.js");
const { SessionManager } = await import(pathToFileURL(sm).href);

const m = SessionManager.open(file);
const filler = "x".repeat(Number(size));
const end = Date.now() + Number(seconds) * 1000;
for (let n = 0; n < Number(count) && Date.now() < end; n++) {
	const id = m.appendMessage({
		role: "toolResult",
		toolCallId: `call_${n}`,
		toolName: "bash",
		content: [{ type: "text", text: `output ${n}: ${filler}` }],
		isError: false,
		timestamp: Date.now(),
	});
	fs.writeSync(1, id + "\n");
	if (interval) await new Promise((r) => setTimeout(r, Number(interval)));
}
