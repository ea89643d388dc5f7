// scale-gen.mjs: write the real-size workloads of issue 35 with pi's own
// SessionManager, for scripts/bench-scale.sh.
//
// Usage:
//   node scale-gen.mjs NODE_MODULES store AGENT_DIR SEED SESSIONS CWDS MEAN_BYTES
//       SESSIONS sessions over CWDS working directories in pi's layout
//       (AGENT_DIR/sessions/--<cwd>--/<time>_<uuid>.jsonl), sizes drawn
//       from a log-normal distribution of mean MEAN_BYTES (median about
//       0.7x the mean, from 3 KB to 40x the mean); about 5% of them are
//       child sessions (a parentSession in the header).
//   node scale-gen.mjs NODE_MODULES session DIR SEED BYTES
//       one session of at least BYTES in DIR (a long coding session: tool
//       results of 0.2-60 KB, a few of up to 400 KB, images, branches,
//       compactions); prints its path.
//
// NODE_MODULES is a folder where pi was npm-installed (scripts/pi-install.sh),
// never inside this repository. Every line is written by pi's
// SessionManager (appendMessage and friends, appendFileSync of
// JSON.stringify): the bytes are pi's, produced by no code of sessctl's,
// so that what sessctl is measured on was not shaped by sessctl's own
// encoder or generator (internal/workload). The same arguments give the
// same files: pi's clock, random ids and uuids are replaced by seeded ones.
//
// The texts are made from a vocabulary of common English and programming
// words, 20,000 invented words (a long tail of rare terms, as real logs,
// identifiers and names give a search index), identifiers, paths, hashes,
// code, log and test output, with some non-ASCII text, escapes and control
// characters. Three marker words occur at known rates (one session in
// 400, 600 and 900) for the search benchmark's query: quokkaPipeline,
// marmosetCache, wombatSchema.
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modulesArg, mode, ...args] = process.argv.slice(2);
const usage = () => {
	console.error("usage: node scale-gen.mjs NODE_MODULES store AGENT_DIR SEED SESSIONS CWDS MEAN_BYTES\n       node scale-gen.mjs NODE_MODULES session DIR SEED BYTES");
	process.exit(2);
};
if (!modulesArg || !mode) usage();
const modules = fs.existsSync(path.join(modulesArg, "node_modules")) ? path.join(modulesArg, "node_modules") : modulesArg;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const pkg = path.join(modules, scope, "pi-coding-agent");

// mulberry32: a small seeded generator.
function mulberry32(a) {
	return () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const seed = Number(args[1]) >>> 0;

// pi's randomness and clock, seeded: entry ids (randomUUID().slice(0, 8)),
// session ids (uuid v7: Date.now() and getRandomValues), timestamps.
const idRand = mulberry32(seed ^ 0x9e3779b9);
const hexDigits = "0123456789abcdef";
const hex = (n) => {
	let s = "";
	for (let i = 0; i < n; i++) s += hexDigits[(idRand() * 16) | 0];
	return s;
};
crypto.randomUUID = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[(idRand() * 4) | 0]}${hex(3)}-${hex(12)}`;
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = (arr) => {
	for (let i = 0; i < arr.length; i++) arr[i] = (idRand() * 256) | 0;
	return arr;
};
// The clock moves 1-20 s at every new Date() (an entry's timestamp), and
// by the gaps the generator adds between sessions.
const clockRand = mulberry32(seed ^ 0x51ed270b);
let clock = Date.UTC(2025, 0, 6, 8, 0, 0);
const RealDate = Date;
class FakeDate extends RealDate {
	constructor(...a) {
		if (a.length === 0) {
			super(clock);
			clock += 1000 + Math.floor(clockRand() * 19000);
		} else {
			super(...a);
		}
	}
	static now() {
		return clock;
	}
}
globalThis.Date = FakeDate;

const load = (rel) => import(pathToFileURL(path.join(pkg, rel)).href);
const { SessionManager, getDefaultSessionDir } = await load("dist/core/session-manager.js");

// ---- text ----

// The vocabulary is built from its own seeded generator, so that it is the
// same whatever the mode.
const vrand = mulberry32(0x5ca1e);
const vpick = (xs) => xs[Math.floor(vrand() * xs.length)];
const common = ("the of and to a in is it you that he was for on are with as I his they be at one have this from or had by " +
	"not word but what some we can out other were all there when up use your how said an each she which do their time if will " +
	"way about many then them write would like so these her long make thing see him two has look more day could go come did " +
	"number sound no most people my over know water than call first who may down side been now find any new work part take get " +
	"place made live where after back little only round man year came show every good me give our under name very through just " +
	"form sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three " +
	"want air well also play small end put home read hand port large spell add even land here must big high such follow act why ask " +
	"men change went light kind off need house picture try us again animal point mother world near build self earth father head stand " +
	"own page should country found answer school grow study still learn plant cover food sun four between state keep eye never last " +
	"let thought city tree cross farm hard start might story saw far sea draw left late run don't while press close night real life " +
	"few north open seem together next white children begin got walk example ease paper group always music those both mark often " +
	"letter until mile river car feet care second book carry took science eat room friend began idea fish mountain stop once base").split(" ");
const tech = ("function return value error module import export build test cache index tree branch parser lexer token stream " +
	"compile runtime goroutine channel mutex lock file path directory config option flag request response handler server client " +
	"database query schema migration table column row transaction commit rollback deploy release version package dependency " +
	"interface struct method pointer slice map array string integer float boolean null undefined promise async await callback " +
	"closure scope variable constant parameter argument type generic template macro compiler linker debugger breakpoint stack heap " +
	"memory allocation garbage collector thread process signal socket buffer encoder decoder serializer json yaml toml protobuf " +
	"endpoint router middleware session cookie token header payload checksum hash signature certificate key secret policy " +
	"container image volume network cluster node pod service ingress replica shard partition queue topic consumer producer " +
	"retry timeout backoff deadline context cancel panic recover assert mock fixture benchmark profile trace metric log warning " +
	"refactor rename extract inline lint format vet review merge rebase conflict patch diff hunk upstream origin remote fetch push pull").split(" ");
const syll = ["ka", "lo", "mi", "ru", "te", "sa", "no", "vi", "de", "po", "zu", "ha", "re", "li", "mo", "ta", "fe", "gu", "ne", "bi", "xo", "ya", "qu", "an", "el", "or", "us", "in", "ex", "um"];
const invented = [];
for (let i = 0; i < 20000; i++) {
	let w = "";
	for (let k = 2 + Math.floor(vrand() * 3); k > 0; k--) w += vpick(syll);
	invented.push(w);
}
const unicode = ["naïve", "café", "résumé", "Übergröße", "façade", "日本語のテキスト", "中文注释", "한국어", "Ελληνικά", "кириллица", "emoji 🚀", "✓ done", "→ next", "≈ 3.5 µs", "“quoted”", "em—dash"];
const escapes = ["\"quoted\"", "C:\\Users\\dev\\proj", "tab\there", "a\\nb", "back\\slash", "<tag attr=\"v\">&amp;</tag>", "bell\u0007", "nul\u0000byte", "line\u2028sep"];
const exts = [".go", ".ts", ".py", ".rs", ".md", ".json", ".yaml", ".sh", ".tsx", ".c"];
const dirs = ["src", "internal", "cmd", "pkg", "lib", "test", "docs", "scripts", "api", "web", "engine", "store"];

// zipf picks an index in [0, n) with probability about 1/(i+1).
const zipf = (r, n) => Math.min(n - 1, Math.floor(Math.exp(r() * Math.log(n + 1))) - 1);

function word(r) {
	const x = r();
	if (x < 0.55) return common[zipf(r, common.length)];
	if (x < 0.8) return tech[zipf(r, tech.length)];
	if (x < 0.95) return invented[zipf(r, invented.length)];
	if (x < 0.99) {
		const a = tech[Math.floor(r() * tech.length)];
		const b = invented[Math.floor(r() * invented.length)];
		return r() < 0.5 ? a + b[0].toUpperCase() + b.slice(1) : `${a}_${b}`;
	}
	return r() < 0.6 ? unicode[Math.floor(r() * unicode.length)] : escapes[Math.floor(r() * escapes.length)];
}
function sentence(r) {
	const n = 4 + Math.floor(r() * 18);
	const ws = new Array(n);
	for (let i = 0; i < n; i++) ws[i] = word(r);
	const s = ws.join(" ");
	return `${s[0].toUpperCase()}${s.slice(1)}${r() < 0.85 ? "." : r() < 0.5 ? "?" : ":"}`;
}
function filePath(r) {
	let p = dirs[Math.floor(r() * dirs.length)];
	for (let k = Math.floor(r() * 3); k > 0; k--) p += `/${invented[zipf(r, invented.length)]}`;
	return `${p}/${invented[zipf(r, invented.length)]}${exts[Math.floor(r() * exts.length)]}`;
}
function ident(r) {
	const a = tech[Math.floor(r() * tech.length)];
	const b = invented[zipf(r, invented.length)];
	return a + b[0].toUpperCase() + b.slice(1);
}
function codeLine(r) {
	const x = r();
	const ind = "\t".repeat(Math.floor(r() * 4));
	if (x < 0.2) return `${ind}${ident(r)} := ${ident(r)}(${word(r)}, ${ident(r)})`;
	if (x < 0.3) return `${ind}if err != nil {`;
	if (x < 0.38) return `${ind}return fmt.Errorf("${tech[Math.floor(r() * tech.length)]} %s: %w", ${ident(r)}, err)`;
	if (x < 0.48) return `${ind}const ${ident(r)} = await ${ident(r)}(${JSON.stringify(filePath(r))}, { ${word(r)}: ${Math.floor(r() * 1000)} });`;
	if (x < 0.55) return `${ind}}`;
	if (x < 0.62) return `${ind}// ${sentence(r)}`;
	if (x < 0.7) return `${ind}func (${tech[Math.floor(r() * tech.length)][0]} *${ident(r)}) ${ident(r)}(${word(r)} string) error {`;
	if (x < 0.8) return `2026-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}T10:${10 + Math.floor(r() * 50)}:05Z INFO ${tech[Math.floor(r() * tech.length)]}: request id=${hex(12)} took ${Math.floor(r() * 900)}ms`;
	if (x < 0.86) return `--- ${r() < 0.8 ? "PASS" : "FAIL"}: Test${ident(r)} (0.${Math.floor(r() * 99)}s)`;
	if (x < 0.92) return `${r() < 0.5 ? "+" : "-"}${ind}${ident(r)}.${ident(r)}(${word(r)})`;
	return `${filePath(r)}:${1 + Math.floor(r() * 900)}:${1 + Math.floor(r() * 80)}: ${sentence(r)}`;
}
// Pools of sentences and code lines, drawn from by every text (building
// each text word by word would take most of the generation time); hashes
// and ids added per text keep the texts distinct.
const POOL = 40000;
const sentences = Array.from({ length: POOL }, () => sentence(vrand));
const codeLines = Array.from({ length: POOL }, () => codeLine(vrand));

function prose(r, n) {
	const out = new Array(n);
	for (let i = 0; i < n; i++) out[i] = sentences[Math.floor(r() * POOL)];
	return out.join(" ");
}
function code(r, bytes) {
	const out = [];
	let n = 0;
	while (n < bytes) {
		let l = codeLines[Math.floor(r() * POOL)];
		if (r() < 0.03) l = `commit ${hex(40)}`;
		else if (r() < 0.02) l = `${l} // ${crypto.randomUUID()}`;
		out.push(l);
		n += l.length + 1;
	}
	return out.join("\n");
}

// ---- sessions ----

// rbytes returns n bytes from the seeded generator r.
const rbytes = (r, n) => {
	const b = Buffer.allocUnsafe(n);
	for (let i = 0; i < n; i++) b[i] = (r() * 256) | 0;
	return b;
};

const models = [
	["anthropic", "claude-sonnet-4-5", "anthropic-messages"],
	["anthropic", "claude-opus-4-1", "anthropic-messages"],
	["openai", "gpt-5", "openai-responses"],
	["openai", "gpt-5-codex", "openai-responses"],
	["google", "gemini-2.5-pro", "google-generative-ai"],
];
const levels = ["off", "minimal", "low", "medium", "high"];
const markers = [["quokkaPipeline", 400], ["marmosetCache", 600], ["wombatSchema", 900]];
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

// writeSession writes one session of at least target bytes with sm, with
// r its generator; big selects the long-session shape.
function writeSession(sm, r, target, big) {
	const pick = (xs) => xs[Math.floor(r() * xs.length)];
	const chance = (p) => r() < p;
	const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
	// Tool result sizes: log-normal around 1.5 KB, 0.2-60 KB, and in a long
	// session a few of up to 400 KB (a build log, a large file read).
	const resultSize = () => {
		if (big && chance(0.003)) return int(100000, 400000);
		const z = Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
		return Math.max(200, Math.min(60000, Math.round(1500 * Math.exp(1.1 * z))));
	};
	let model = pick(models);
	const path = []; // ids on the active branch, for branches, labels and compactions
	const push = (id) => path.push(id);
	const marked = markers.filter(([, every]) => r() * every < 1).map(([w]) => w);
	const usage = () => {
		const input = int(200, 150000);
		const output = int(10, 8000);
		const cacheRead = chance(0.6) ? int(0, 120000) : 0;
		const cacheWrite = chance(0.3) ? int(0, 9000) : 0;
		return {
			input, output, cacheRead, cacheWrite,
			totalTokens: input + output + cacheRead + cacheWrite,
			cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: cacheWrite * 3.75e-6, total: input * 3e-6 + output * 15e-6 + cacheRead * 3e-7 + cacheWrite * 3.75e-6 },
		};
	};
	const user = (first) => {
		let text = prose(r, int(1, first ? 5 : 3));
		if (chance(0.12)) text += `\n\n\`\`\`\n${code(r, int(100, 3000))}\n\`\`\``;
		if (marked.length && chance(0.3)) text += ` ${marked.pop()}`;
		let content = text;
		if (chance(big ? 0.004 : 0.02)) {
			const data = chance(0.5) ? png : rbytes(r, int(2000, 60000)).toString("base64");
			content = [{ type: "text", text }, { type: "image", data, mimeType: "image/png" }];
		}
		push(sm.appendMessage({ role: "user", content, timestamp: Date.now() }));
	};
	const assistant = (withTools) => {
		const content = [];
		if (chance(0.5)) {
			const t = prose(r, int(1, 6));
			content.push({ type: "thinking", thinking: t, thinkingSignature: chance(0.5) ? rbytes(r, 96).toString("base64") : "" });
		}
		if (chance(0.85)) {
			let t = prose(r, int(1, 8));
			if (chance(0.15)) t += `\n\n- ${prose(r, 1)}\n- ${prose(r, 1)}\n\n\`\`\`go\n${code(r, int(200, 2500))}\n\`\`\``;
			content.push({ type: "text", text: t });
		}
		const calls = [];
		if (withTools) {
			for (let i = int(1, 3); i > 0; i--) {
				const name = pick(["read", "read", "bash", "bash", "edit", "write", "grep", "find"]);
				const file = filePath(r);
				let a;
				switch (name) {
					case "bash": a = { command: pick([`go test ./${file.split("/")[0]}/...`, `npm test -- ${file}`, `git diff --stat`, `rg -n ${ident(r)} ${file.split("/")[0]}`, `make build`]), timeout: chance(0.3) ? 120 : undefined }; break;
					case "edit": a = { path: file, oldText: code(r, int(20, 400)), newText: code(r, int(20, 600)) }; break;
					case "write": a = { path: file, content: code(r, int(200, 6000)) }; break;
					case "grep": a = { pattern: ident(r), path: file.split("/")[0] }; break;
					case "find": a = { pattern: `*${pick(exts)}`, path: file.split("/")[0] }; break;
					default: a = { path: file, offset: chance(0.3) ? int(1, 500) : undefined, limit: chance(0.3) ? 200 : undefined };
				}
				const c = { type: "toolCall", id: `toolu_${hex(24)}`, name, arguments: a };
				content.push(c);
				calls.push(c);
			}
		}
		const stopReason = calls.length ? "toolUse" : chance(0.04) ? "aborted" : chance(0.03) ? "error" : chance(0.02) ? "length" : "stop";
		const msg = { role: "assistant", content, api: model[2], provider: model[0], model: model[1], usage: usage(), stopReason, timestamp: Date.now() };
		if (chance(0.5)) msg.responseId = `resp_${hex(24)}`;
		if (stopReason === "error") msg.errorMessage = pick(["429 rate limited", "overloaded_error: Overloaded", "request timed out"]);
		push(sm.appendMessage(msg));
		for (const c of calls) {
			const isError = chance(0.08);
			let text = isError ? `Error: ${prose(r, 1)}` : code(r, resultSize());
			if (marked.length && chance(0.2)) text += `\n${marked.pop()}`;
			const result = { role: "toolResult", toolCallId: c.id, toolName: c.name, content: [{ type: "text", text }], isError, timestamp: Date.now() };
			if (chance(0.2)) result.details = { truncated: chance(0.3), lines: int(1, 2000) };
			push(sm.appendMessage(result));
		}
		return calls.length;
	};
	const turn = (first) => {
		user(first);
		for (let round = int(1, big ? 12 : 6); round > 0; round--) {
			if (!assistant(round > 1 || chance(0.7))) break;
		}
	};

	if (chance(0.9)) {
		push(sm.appendModelChange(model[0], model[1]));
		push(sm.appendThinkingLevelChange(pick(levels)));
	}
	turn(true);
	if (chance(0.3)) push(sm.appendSessionInfo(prose(r, 1).slice(0, 60)));
	// pi writes the file at the first assistant message, which the first
	// turn has: from here on its size is what is measured.
	const file = sm.getSessionFile();
	const size = () => fs.statSync(file).size;
	let bytes = size();
	let sinceCompaction = 0;
	while (bytes < target) {
		const before = bytes;
		const x = r();
		if (x < 0.86) {
			turn(false);
		} else if (x < 0.88) {
			const exit = chance(0.2) ? undefined : int(0, 2);
			const out = code(r, int(50, 3000));
			push(sm.appendMessage({ role: "bashExecution", command: `git ${pick(["status", "diff", "log --oneline -20"])}`, output: out, exitCode: exit, cancelled: exit === undefined, truncated: false, timestamp: Date.now() }));
		} else if (x < 0.9) {
			model = pick(models);
			push(sm.appendModelChange(model[0], model[1]));
		} else if (x < 0.91) {
			push(sm.appendThinkingLevelChange(pick(levels)));
		} else if (x < 0.93) {
			push(sm.appendLabelChange(path[Math.floor(r() * path.length)], chance(0.2) ? undefined : pick(["checkpoint", "works", "before refactor", "try 2"])));
		} else if (x < 0.94) {
			push(sm.appendCustomEntry(pick(["ext-state", "todo"]), { items: [prose(r, 1)] }));
		} else if (x < 0.955 && path.length > 10) {
			// Go back a few entries and carry on from there: a branch.
			const k = path.length - int(2, Math.min(40, path.length - 2));
			sm.branch(path[k]);
			path.length = k + 1;
		} else if (x < 0.96) {
			push(sm.appendSessionInfo(prose(r, 1).slice(0, 60)));
		}
		bytes = size();
		sinceCompaction += bytes - before;
		// A compaction every 300 KB-2 MB of a long session, keeping the
		// last few entries.
		if (sinceCompaction > (big ? 2e6 : 3e5) && path.length > 30 && chance(0.5)) {
			const kept = path[path.length - int(5, 25)];
			const s = `## Goal\n${prose(r, 2)}\n\n## Progress\n${prose(r, int(3, 12))}\n\n## Next\n${prose(r, 2)}`;
			push(sm.appendCompaction(s, kept, int(60000, 190000), { readFiles: [filePath(r), filePath(r)], modifiedFiles: [filePath(r)] }, false));
			sinceCompaction = 0;
		}
	}
}

switch (mode) {
	case "store": {
		const [agentDir, , nArg, cwdArg, meanArg] = args;
		const count = Number(nArg);
		const ncwd = Number(cwdArg);
		const mean = Number(meanArg);
		if (!agentDir || !(count > 0) || !(ncwd > 0) || !(mean > 0)) usage();
		const r0 = mulberry32(seed);
		const cwds = Array.from({ length: ncwd }, (_, i) => {
			const base = i % 5 === 0 ? `/home/dev/work/${invented[i * 37]}` : i % 7 === 0 ? `/Users/dev/Code/${invented[i * 41]} app` : `/home/dev/src/${invented[i * 53]}-${tech[i % tech.length]}`;
			return base;
		});
		const sigma = 0.8;
		const median = mean / Math.exp((sigma * sigma) / 2);
		const last = new Map(); // cwd -> the last session file written there
		let total = 0;
		for (let i = 0; i < count; i++) {
			const r = mulberry32((seed * 1000003 + i * 7919) >>> 0);
			const z = Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
			const target = Math.max(3000, Math.min(40 * mean, median * Math.exp(sigma * z)));
			// Half the sessions go to any cwd, half mostly to a few busy ones.
			const cwd = cwds[r0() < 0.5 ? Math.floor(r0() * ncwd) : zipf(r0, ncwd)];
			const sm = SessionManager.create(cwd, getDefaultSessionDir(cwd, agentDir));
			if (r() < 0.05 && last.has(cwd)) sm.newSession({ parentSession: last.get(cwd) });
			writeSession(sm, r, target, false);
			const file = sm.getSessionFile();
			last.set(cwd, file);
			total += fs.statSync(file).size;
			clock += Math.floor(clockRand() * 1200000); // up to 20 min to the next session
			if ((i + 1) % 5000 === 0) process.stderr.write(`scale-gen: ${i + 1} sessions, ${(total / 1e9).toFixed(2)} GB\n`);
		}
		process.stdout.write(`${JSON.stringify({ sessions: count, bytes: total })}\n`);
		break;
	}
	case "session": {
		const [dir, , bytesArg] = args;
		const target = Number(bytesArg);
		if (!dir || !(target > 0)) usage();
		const r = mulberry32(seed * 2654435761);
		const sm = SessionManager.create("/home/dev/src/monorepo", dir);
		writeSession(sm, r, target, true);
		process.stdout.write(`${sm.getSessionFile()}\n`);
		break;
	}
	default:
		usage();
}
