// pi-context.mjs: the model context pi builds for session files, for the
// adapter's tests (pi_test.go).
//
// Usage: node pi-context.mjs PACKAGE_DIR FILE...
//
// PACKAGE_DIR is pi's installed package (@mariozechner/pi-coding-agent up
// to 0.73, @earendil-works/pi-coding-agent from 1.0). It prints
// {version, sessions: {FILE: {sessionId, context}}}, context being
// SessionManager.open(FILE).buildSessionContext().
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, ...files] = process.argv.slice(2);
const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
const { SessionManager } = await import(pathToFileURL(path.join(pkg, "dist/core/session-manager.js")).href);
const sessions = {};
for (const f of files) {
	const sm = SessionManager.open(f, path.dirname(f));
	sessions[f] = { sessionId: sm.getSessionId(), context: sm.buildSessionContext() };
}
process.stdout.write(JSON.stringify({ version, sessions }));
