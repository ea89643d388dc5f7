// pi-gen.mjs: write random sessions with pi's own SessionManager, for the
// differential tests that compare sessctl with pi on them
// (engine/pireference_test.go, cmd/sessctl's compact test).
//
// Usage: node pi-gen.mjs NODE_MODULES DIR SEED COUNT
//
// NODE_MODULES is a folder where pi was npm-installed
// (scripts/pi-install.sh), or its node_modules; never inside this
// repository. COUNT sessions are written into DIR (one session directory;
// their cwds differ), with everything pi's SessionManager can append:
// user turns with text and images, assistant messages with thinking, tool
// calls, usage (with and without totalTokens), stop reasons, error
// messages, responseId / responseModel / diagnostics, tool results,
// bashExecution, custom and custom_message entries, model and thinking
// level changes, labels set, moved and cleared, session names set,
// blanked and cleared with an empty name, branches, branch summaries, a
// reset leaf, and compactions (cut where pi's prepareCompaction cuts, or
// at a random entry, or at an id that is not on the path); with pi 1.x
// also usage entries, system messages (sections, tools added and
// removed), context edits (omit, replace with a string or blocks) of
// recent or random editable entries of the branch, compactions with a
// usage and retain-none compactions (pi adds the system message
// checkpoint itself). The same SEED
// gives the same sessions: pi's clock and random ids are replaced by
// seeded ones (the clock moves 1 s on every new Date()). Prints a JSON
// array of the files written, in order.
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modulesArg, dir, seedArg, countArg] = process.argv.slice(2);
if (!modulesArg || !dir || seedArg === undefined || !countArg) {
	console.error("usage: node pi-gen.mjs NODE_MODULES DIR SEED COUNT");
	process.exit(2);
}
const modules = fs.existsSync(path.join(modulesArg, "node_modules")) ? path.join(modulesArg, "node_modules") : modulesArg;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const pkg = path.join(modules, scope, "pi-coding-agent");
const seed = Number(seedArg) >>> 0;
const count = Number(countArg);

// mulberry32: a small seeded generator.
function mulberry32(a) {
	return () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

// pi's randomness and clock, seeded: entry ids (randomUUID().slice(0, 8)),
// session ids (uuid v7: Date.now() and getRandomValues), timestamps.
let idRand = mulberry32(seed ^ 0x9e3779b9);
const hex = (n) => Array.from({ length: n }, () => Math.floor(idRand() * 16).toString(16)).join("");
crypto.randomUUID = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[Math.floor(idRand() * 4)]}${hex(3)}-${hex(12)}`;
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = (arr) => {
	for (let i = 0; i < arr.length; i++) arr[i] = Math.floor(idRand() * 256);
	return arr;
};
let clock = Date.UTC(2026, 2, 1, 9, 0, 0);
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

const load = (rel) => import(pathToFileURL(path.join(pkg, rel)).href);
const { SessionManager } = await load("dist/core/session-manager.js");
const { prepareCompaction } = await load("dist/core/compaction/compaction.js");

const words = ("the parser fails on nested generics so we read the lexer first then fix the token " +
	"stream and run the tests again while keeping the public API stable and the docs current " +
	"error warning build module import export function return value cache index tree branch").split(" ");
const files = ["src/lex.ts", "src/parse.ts", "src/index.ts", "README.md", "test/lex.test.ts", "docs/api.md", "package.json", "src/util/strings.ts"];
const models = [
	["anthropic", "claude-sonnet-4-5", "anthropic-messages"],
	["openai", "gpt-5", "openai-responses"],
	["google", "gemini-2.5-pro", "google-generative-ai"],
];
const levels = ["off", "minimal", "low", "medium", "high", "xhigh"];

fs.mkdirSync(dir, { recursive: true });
const out = [];
for (let n = 0; n < count; n++) {
	const rand = mulberry32((seed * 1000003 + n * 7919) >>> 0);
	const pick = (xs) => xs[Math.floor(rand() * xs.length)];
	const chance = (p) => rand() < p;
	const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
	const text = (maxWords) => Array.from({ length: int(1, maxWords) }, () => pick(words)).join(" ");
	const bulk = (chars) => {
		let s = "";
		while (s.length < chars) s += `${text(12)}\n`;
		return s.slice(0, chars);
	};

	const cwd = pick(["/home/u/proj", `/home/u/proj-${n}`, "/work/app", `/srv/repo ${n}`]);
	const sm = SessionManager.create(cwd, dir);
	let model = pick(models);
	let call = 0;
	const ts = () => clock;
	const usage = () => {
		const input = int(0, 8000);
		const output = int(0, 2000);
		const cacheRead = chance(0.5) ? int(0, 20000) : 0;
		const cacheWrite = chance(0.3) ? int(0, 3000) : 0;
		return {
			input, output, cacheRead, cacheWrite,
			totalTokens: chance(0.15) ? 0 : input + output + cacheRead + cacheWrite,
			cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: cacheWrite * 3.75e-6, total: (input * 3 + output * 15) * 1e-6 },
		};
	};
	const user = () => {
		const content = chance(0.2)
			? [{ type: "text", text: text(30) }, { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", mimeType: "image/png" }]
			: text(40);
		return sm.appendMessage({ role: "user", content, timestamp: ts() });
	};
	const assistant = (withTools) => {
		const content = [];
		if (chance(0.4)) content.push({ type: "thinking", thinking: text(30), thinkingSignature: `sig${int(1, 999)}` });
		if (chance(0.8)) content.push({ type: "text", text: chance(0.2) ? bulk(int(200, 3000)) : text(50) });
		const calls = [];
		if (withTools) {
			for (let i = int(1, 3); i > 0; i--) {
				const name = pick(["read", "edit", "write", "bash", "grep"]);
				const args = name === "bash" ? { command: `npm test -- ${pick(files)}` } : { path: pick(files) };
				if (name === "edit") Object.assign(args, { oldText: text(5), newText: text(5) });
				if (name === "write") args.content = bulk(int(10, 800));
				const c = { type: "toolCall", id: `call_${++call}`, name, arguments: args };
				content.push(c);
				calls.push(c);
			}
		}
		const stopReason = calls.length ? "toolUse" : chance(0.08) ? "aborted" : chance(0.08) ? "error" : chance(0.05) ? "length" : "stop";
		const msg = { role: "assistant", content, api: model[2], provider: model[0], model: model[1], usage: usage(), stopReason, timestamp: ts() };
		// Providers add these after building the message (pi-ai 0.73.1).
		if (chance(0.5)) msg.responseId = `resp_${hex(12)}`;
		if (chance(0.15)) msg.responseModel = `${model[1]}-2026-01-01`;
		if (chance(0.1)) msg.diagnostics = [{ type: "provider_transport_failure", timestamp: ts(), error: { name: "Error", message: "socket hang up", code: "ECONNRESET" }, details: { attempt: int(1, 3) } }];
		if (stopReason === "error") msg.errorMessage = pick(["429 rate limited", "overloaded <retry> & wait"]);
		sm.appendMessage(msg);
		for (const c of calls) {
			const isError = chance(0.15);
			const result = { role: "toolResult", toolCallId: c.id, toolName: c.name, content: [{ type: "text", text: chance(0.3) ? bulk(int(500, 6000)) : text(20) }], isError, timestamp: ts() };
			if (chance(0.3)) result.details = { lines: int(1, 400) };
			sm.appendMessage(result);
		}
		return calls.length;
	};
	const turn = () => {
		user();
		for (let round = int(1, 4); round > 0; round--) {
			if (!assistant(round > 1 || chance(0.5))) break;
		}
	};
	const ids = () => sm.getEntries().map((e) => e.id);

	if (chance(0.8)) {
		sm.appendModelChange(model[0], model[1]);
		sm.appendThinkingLevelChange(pick(levels));
	}
	turn();
	const steps = int(5, 40);
	for (let step = 0; step < steps; step++) {
		const r = rand();
		if (r < 0.4) {
			turn();
		} else if (r < 0.44) {
			const exit = chance(0.2) ? undefined : int(0, 2);
			const m = { role: "bashExecution", command: `git ${pick(["status", "diff", "log"])}`, output: text(20), exitCode: exit, cancelled: exit === undefined, truncated: chance(0.1), timestamp: ts() };
			if (chance(0.2)) m.excludeFromContext = true;
			sm.appendMessage(m);
		} else if (r < 0.48) {
			sm.appendCustomMessageEntry(pick(["note", "plan"]), chance(0.5) ? text(20) : [{ type: "text", text: text(20) }], chance(0.7), chance(0.5) ? { k: int(1, 9) } : undefined);
		} else if (r < 0.51) {
			sm.appendCustomEntry(pick(["ext-state", "todo"]), chance(0.7) ? { items: [text(3)] } : undefined);
		} else if (r < 0.55) {
			model = pick(models);
			sm.appendModelChange(model[0], model[1]);
		} else if (r < 0.6) {
			sm.appendThinkingLevelChange(pick(levels));
		} else if (r < 0.67) {
			const all = ids();
			const target = pick(all);
			const label = chance(0.25) ? undefined : chance(0.15) ? "" : pick(["checkpoint", "good", "try 2", "before refactor"]);
			sm.appendLabelChange(target, label);
		} else if (r < 0.74) {
			sm.appendSessionInfo(pick([text(4), text(6), "", "   ", `  ${text(3)}  `]));
		} else if (r < 0.8) {
			sm.branch(pick(ids()));
		} else if (r < 0.84) {
			sm.branchWithSummary(pick(ids()), chance(0.15) ? "" : text(30), chance(0.5) ? { readFiles: [pick(files)], modifiedFiles: [pick(files)] } : undefined, chance(0.2));
		} else if (r < 0.85) {
			sm.resetLeaf();
		} else if (r < 0.95 && typeof sm.appendContextEdit === "function") {
			// pi 1.x: usage entries, system messages and context edits.
			const r2 = rand();
			if (r2 < 0.3) {
				const u = usage();
				sm.appendUsage(pick(["compaction", "branch_summary", "title", "classify"]), model[0], model[1], u, chance(0.3) ? text(5) : undefined);
			} else if (r2 < 0.6) {
				const m = { role: "system", content: chance(0.7) ? text(20) : [{ type: "text", text: text(10) }, { type: "text", text: text(5) }], timestamp: ts() };
				if (chance(0.4)) m.sections = chance(0.7) ? { rules: text(12), env: `cwd ${pick(files)}` } : { rules: null };
				if (chance(0.3)) m.toolsAdded = [{ name: pick(["read", "bash", "grep"]), description: text(6), parameters: { type: "object", properties: { path: { type: "string" } } } }];
				if (chance(0.15)) m.toolsRemoved = [{ name: pick(["read", "bash", "grep"]) }];
				sm.appendMessage(m);
			} else {
				const editable = sm.getBranch().filter((e) => e.type === "custom_message" ||
					(e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));
				if (editable.length === 0) continue;
				const target = chance(0.7) ? editable[editable.length - 1 - Math.floor(rand() * Math.min(4, editable.length))] : pick(editable);
				const rr = rand();
				const replacement = rr < 0.4 ? null : rr < 0.7 ? { content: `[edited] ${text(8)}` } : { content: [{ type: "text", text: `[replaced] ${text(8)}` }] };
				sm.appendContextEdit(target.id, replacement);
			}
		} else {
			const branch = sm.getBranch();
			if (branch.length === 0 || branch[branch.length - 1].type === "compaction") continue;
			const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: int(50, 3000) });
			let firstKept = prep?.firstKeptEntryId;
			if (chance(0.2)) firstKept = pick(branch).id;
			if (chance(0.05)) firstKept = "00000000";
			// pi 1.x: a retain-none compaction (firstKeptEntryId is its own id).
			const retainNone = typeof sm.appendContextEdit === "function" && chance(0.15);
			if (!firstKept && !retainNone) continue;
			const details = chance(0.8) ? { readFiles: [pick(files)], modifiedFiles: chance(0.5) ? [pick(files)] : [] } : undefined;
			sm.appendCompaction(`Summary ${step}: ${text(30)}`, retainNone ? undefined : firstKept, prep ? prep.tokensBefore : int(1000, 90000), details, chance(0.1), chance(0.3) ? usage() : undefined);
		}
	}
	if (chance(0.15)) {
		// End on an assistant reply that no user message started.
		assistant(false);
	}
	out.push(sm.getSessionFile());
}
process.stdout.write(`${JSON.stringify(out)}\n`);
