// pi-calls.mjs: make calls on pi's own SessionManager with a fixed clock
// and fixed ids, for the tests that check that sessctl writes the same
// bytes for the same calls (engine's TestAppendsAsPi16).
//
// Usage: node pi-calls.mjs NODE_MODULES DIR < CALLS.json
//
// CALLS.json is {cwd, sessionId, clock (ms), ids: [...], calls:
// [[method, ...args]...]}: SessionManager.create(cwd, DIR, {id:
// sessionId}) and then each method with its arguments. The clock moves
// 1 s on every new Date() without arguments; entry ids are taken from ids
// in order. Prints {file, errors} (file null when pi wrote none; errors:
// the message of each call that threw, null for the others).
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modulesArg, dir] = process.argv.slice(2);
const modules = fs.existsSync(path.join(modulesArg, "node_modules")) ? path.join(modulesArg, "node_modules") : modulesArg;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const req = JSON.parse(fs.readFileSync(0, "utf8"));
const ids = [...req.ids];
// pi's entry ids are randomUUID().slice(0, 8).
crypto.randomUUID = () => `${ids.shift() ?? "ffffffff"}-0000-4000-8000-000000000000`;
syncBuiltinESMExports();
let clock = req.clock;
const RealDate = Date;
class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) {
			super(clock);
			clock += 1000;
		} else {
			super(...args);
		}
	}
	static now() {
		return clock;
	}
}
globalThis.Date = FakeDate;
const { SessionManager } = await import(pathToFileURL(path.join(modules, scope, "pi-coding-agent/dist/core/session-manager.js")).href);
const sm = SessionManager.create(req.cwd, dir, { id: req.sessionId });
const errors = [];
for (const [method, ...args] of req.calls) {
	try {
		sm[method](...args.map((a) => (a === "<undefined>" ? undefined : a)));
		errors.push(null);
	} catch (e) {
		errors.push(String(e?.message ?? e));
	}
}
const file = sm.getSessionFile();
process.stdout.write(`${JSON.stringify({ file: file && fs.existsSync(file) ? file : null, errors })}\n`);
