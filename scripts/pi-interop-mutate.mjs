// pi-interop-mutate.mjs: checks that sessions written by `sessctl fork`,
// `branch` and `compact` load in pi (the reference, 0.73.1) with the expected leaf and
// context, that pi keeps appending to them, and that `sessctl compact`
// picks pi's cut point, tokensBefore, file lists and summary inputs (pi's
// own prepareCompaction, serializeConversation and convertToLlm are the
// reference). Not part of `make test`: it needs pi from npm.
// (scripts/pi-interop.sh checks files that sessctl writes or migrates.)
//
//   go build -o bin/sessctl ./cmd/sessctl
//   node scripts/pi-interop-mutate.mjs "$(scripts/pi-install.sh 0.73.1)" bin/sessctl
//
// The first argument is the folder where npm install ran (or its
// node_modules).
//
// It works in a fresh temporary directory (PI_CODING_AGENT_DIR points
// there) on sessions written by pi's own SessionManager and on seeded
// workloads from `sessctl-bench gen`, and exits 1 on the first kind of mismatch
// it reports (after reporting all of them).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";

const [nodeModules, sessctlArg] = process.argv.slice(2);
if (!nodeModules || !sessctlArg) {
	console.error("usage: node pi-interop-mutate.mjs NODE_MODULES SESSCTL_BINARY");
	process.exit(2);
}
const sessctl = path.resolve(sessctlArg);
const modules = fs.existsSync(path.join(nodeModules, "node_modules")) ? path.join(nodeModules, "node_modules") : nodeModules;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const pkg = path.join(modules, scope, "pi-coding-agent");
const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
console.log(`pi ${version}`);
const load = (rel) => import(pathToFileURL(path.join(pkg, rel)).href);
const { SessionManager, buildSessionContext } = await load("dist/core/session-manager.js");
const cmp = await load("dist/core/compaction/compaction.js");
const utils = await load("dist/core/compaction/utils.js");
const bs = await load("dist/core/compaction/branch-summarization.js");
const { convertToLlm } = await load("dist/core/messages.js");

const work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-interop-"));
const agentDir = path.join(work, "agent");
fs.mkdirSync(agentDir, { recursive: true });
const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir };

let failures = 0;
let checks = 0;
function check(ok, what, detail) {
	checks++;
	if (!ok) {
		failures++;
		console.log(`FAIL ${what}`);
		if (detail !== undefined) console.log(`  ${typeof detail === "string" ? detail : JSON.stringify(detail).slice(0, 2000)}`);
	}
}

function run(args, { expect = 0 } = {}) {
	const r = spawnSync(sessctl, args, { env, encoding: "utf8", maxBuffer: 1 << 30 });
	if (r.status !== expect) {
		throw new Error(`sessctl ${args.join(" ")}: exit ${r.status}, want ${expect}\n${r.stderr}`);
	}
	return r;
}
const runJSON = (args) => JSON.parse(run(args).stdout);

// What pi sees in a file: leaf, branch ids, context.
function piView(file) {
	const sm = SessionManager.open(file);
	return {
		leafId: sm.getLeafId(),
		branch: sm.getBranch().map((e) => e.id),
		context: sm.buildSessionContext(),
		entries: sm.getEntries(),
	};
}
// pi's context of a file at an entry.
function piContextAt(file, leafId) {
	const sm = SessionManager.open(file);
	return buildSessionContext(sm.getEntries(), leafId);
}
// JSON round trip, so undefined members compare like sessctl's JSON.
const norm = (v) => JSON.parse(JSON.stringify(v));

function copy(file, tag) {
	const dir = path.join(work, tag);
	fs.mkdirSync(dir, { recursive: true });
	const out = path.join(dir, path.basename(file));
	fs.copyFileSync(file, out);
	return out;
}

// The loaded file agrees between pi and sessctl.
function agree(file, what, wantLeaf) {
	const pi = piView(file);
	const ours = JSON.parse(run(["context", file]).stdout);
	check(isDeepStrictEqual(norm(pi.context), ours), `${what}: pi's context equals sessctl context`, { file });
	if (wantLeaf !== undefined) check(pi.leafId === wantLeaf, `${what}: pi's leaf is ${wantLeaf}`, pi.leafId);
	return pi;
}

// ---- sessions to work on ----

function piAuthoredSession() {
	const cwd = path.join(work, "proj");
	fs.mkdirSync(cwd, { recursive: true });
	const sm = SessionManager.create(cwd, path.join(work, "pi-authored"));
	let t = 1772355600000;
	const usage = (total) => ({ input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
	const user = (content) => sm.appendMessage({ role: "user", content, timestamp: t++ });
	const asst = (content, total = 0, stopReason = "stop") =>
		sm.appendMessage({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-x", usage: usage(total), stopReason, timestamp: t++ });
	const tool = (text, isError = false) => sm.appendMessage({ role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text }], isError, timestamp: t++ });
	const call = (name, args) => ({ type: "toolCall", id: `c${t}`, name, arguments: args });
	sm.appendModelChange("anthropic", "claude-x");
	sm.appendThinkingLevelChange("high");
	user("Fix the tokenizer 😀 in src/lex.ts, keep <tags> & \u2028 intact");
	asst([{ type: "thinking", thinking: "look first" }, { type: "text", text: "Reading." }, call("read", { path: "src/lex.ts", "2": 1, "1": [1.5, null], z: { b: 1, a: 2 } })], 1200, "toolUse");
	tool("x".repeat(9000));
	asst([call("edit", { path: "src/lex.ts", oldText: "a", newText: "b" }), call("bash", { command: "npm test" })], 2400, "toolUse");
	tool("tests failed: 3", true);
	sm.appendMessage({ role: "bashExecution", command: "git status", output: "", exitCode: 1, cancelled: false, truncated: false, timestamp: t++ });
	sm.appendMessage({ role: "bashExecution", command: "cat .env", output: "SECRET=1", exitCode: 0, cancelled: false, truncated: false, timestamp: t++, excludeFromContext: true });
	sm.appendCustomMessageEntry("note", "extension context", true, { k: 1 });
	user([{ type: "text", text: "also " }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }, { type: "text", text: "write docs" }]);
	asst([call("write", { path: "docs/lex.md", content: "y".repeat(3000) })], 5000, "toolUse");
	tool("ok");
	const mid = asst([{ type: "text", text: "Done with docs." }], 5200);
	sm.appendLabelChange(mid, "docs done");
	user("now the parser");
	asst([call("read", { path: "src/parse.ts" }), call("grep", { pattern: "TODO", path: "src" })], 7000, "toolUse");
	tool("z".repeat(30000));
	asst([{ type: "text", text: "aborted" }], 0, "aborted");
	user("retry please");
	asst([call("edit", { path: "src/parse.ts" })], 9000, "toolUse");
	tool("edited");
	asst([{ type: "text", text: "Parser fixed." }], 9100);
	// A side branch with a branch summary, then back on the main line.
	const leaf = sm.getLeafId();
	sm.branch(mid);
	user("side quest");
	asst([call("write", { path: "side.ts" })], 100, "toolUse");
	sm.branchWithSummary(leaf, "Explored a side quest.", { readFiles: ["s.ts"], modifiedFiles: ["side.ts"] }, false);
	user("final question");
	asst([{ type: "text", text: "final answer" }], 9500);
	return sm.getSessionFile();
}

const sessions = [["pi-authored", piAuthoredSession()]];
for (const [seed, n] of [[1, 300], [7, 800], [42, 2500]]) {
	const f = path.join(work, "gen", `2026-03-01T09-00-00-000Z_0000000${seed % 10}-0000-4000-8000-00000000000${seed % 10}.jsonl`);
	fs.mkdirSync(path.dirname(f), { recursive: true });
	run(["gen", "session", "--seed", String(seed), "--entries", String(n), f]);
	sessions.push([`gen seed ${seed}`, f]);
}

// ---- compaction: sessctl's preparation equals pi's ----

function piPrepare(file, keep, reserve = 16384) {
	const branch = SessionManager.open(file).getBranch();
	const prep = cmp.prepareCompaction(branch, { enabled: true, reserveTokens: reserve, keepRecentTokens: keep });
	if (!prep) return { refused: branch.length > 0 && branch[branch.length - 1].type === "compaction" ? "already compacted" : "nothing to compact" };
	const lists = utils.computeFileLists(prep.fileOps);
	const requests = [];
	const conv = (msgs) => utils.serializeConversation(convertToLlm(msgs));
	const histHead = (msgs) => {
		let p = `<conversation>\n${conv(msgs)}\n</conversation>\n\n`;
		if (prep.previousSummary) p += `<previous-summary>\n${prep.previousSummary}\n</previous-summary>\n\n`;
		return p;
	};
	if (prep.isSplitTurn && prep.turnPrefixMessages.length > 0) {
		if (prep.messagesToSummarize.length > 0)
			requests.push({ kind: prep.previousSummary ? "history-update" : "history", head: histHead(prep.messagesToSummarize), maxTokens: Math.floor(0.8 * reserve) });
		requests.push({ kind: "turn-prefix", head: `<conversation>\n${conv(prep.turnPrefixMessages)}\n</conversation>\n\n`, maxTokens: Math.floor(0.5 * reserve) });
	} else {
		requests.push({ kind: prep.previousSummary ? "history-update" : "history", head: histHead(prep.messagesToSummarize), maxTokens: Math.floor(0.8 * reserve) });
	}
	return {
		firstKeptEntryId: prep.firstKeptEntryId,
		tokensBefore: Number.isNaN(prep.tokensBefore) ? null : prep.tokensBefore,
		isSplitTurn: prep.isSplitTurn,
		messagesToSummarize: prep.messagesToSummarize.length,
		turnPrefixMessages: prep.turnPrefixMessages.length,
		readFiles: lists.readFiles,
		modifiedFiles: lists.modifiedFiles,
		suffix: utils.formatFileOperations(lists.readFiles, lists.modifiedFiles),
		requests,
	};
}

let cuts = 0;
for (const [name, file] of sessions) {
	for (const keep of [0, 20, 200, 2000, 20000, 100000]) {
		const pi = piPrepare(file, keep);
		const messages = SessionManager.open(file).getEntries().filter((e) => e.type === "message").length;
		const what = `${name} keep ${keep}`;
		if (pi.refused || messages < 2) {
			const r = spawnSync(sessctl, ["compact", "--dry-run", "--keep-tokens", String(keep), file], { env, encoding: "utf8" });
			check(r.status === 1 && r.stderr.includes(pi.refused ?? "nothing to compact"), `${what}: refused like pi (${pi.refused})`, r.stderr);
			continue;
		}
		const ours = runJSON(["compact", "--dry-run", "--json", "--keep-tokens", String(keep), file]);
		for (const k of ["firstKeptEntryId", "tokensBefore", "isSplitTurn", "messagesToSummarize", "turnPrefixMessages", "readFiles", "modifiedFiles"]) {
			check(isDeepStrictEqual(ours[k], pi[k]), `${what}: ${k}`, { pi: pi[k], sessctl: ours[k] });
		}
		check(ours.requests.length === pi.requests.length, `${what}: number of requests`, { pi: pi.requests.map((r) => r.kind), sessctl: ours.requests.map((r) => r.kind) });
		pi.requests.forEach((want, i) => {
			const got = ours.requests[i];
			if (!got) return;
			check(got.kind === want.kind && got.maxTokens === want.maxTokens, `${what}: request ${i} kind and budget`, { pi: [want.kind, want.maxTokens], sessctl: [got.kind, got.maxTokens] });
			check(got.prompt.startsWith(want.head), `${what}: request ${i} conversation and previous summary are pi's bytes`);
		});
		cuts++;
	}
}
console.log(`compaction preparation compared with pi on ${cuts} (session, keep) pairs`);

// ---- fork ----

for (const [name, file] of sessions) {
	const src = piView(file);
	const mid = src.branch[Math.floor(src.branch.length / 2)];
	for (const [tag, args, at] of [
		["leaf", [], src.leafId],
		["at", ["--at", mid], mid],
	]) {
		const out = runJSON(["fork", file, "--json", ...args]);
		const pi = agree(out.path, `${name} fork ${tag}`, out.leafId);
		check(isDeepStrictEqual(norm(pi.context), norm(piContextAt(file, at))), `${name} fork ${tag}: context equals pi's context of the source at ${at}`);
		const header = JSON.parse(fs.readFileSync(out.path, "utf8").split("\n")[0]);
		check(header.parentSession === path.resolve(file) && header.version === 3, `${name} fork ${tag}: header`, header);
		// pi keeps writing to the fork.
		const sm = SessionManager.open(out.path);
		const id = sm.appendMessage({ role: "user", content: "after fork", timestamp: 1 });
		agree(out.path, `${name} fork ${tag} then a pi append`, id);
	}
	const all = runJSON(["fork", file, "--all", "--json", "--cwd", path.join(work, "elsewhere")]);
	const pia = agree(all.path, `${name} fork --all`, src.leafId);
	check(pia.entries.length === src.entries.length, `${name} fork --all keeps every entry`);
}

// ---- branch ----

for (const [name, file] of sessions) {
	const src = piView(file);
	const target = src.branch[Math.floor(src.branch.length / 3)];
	for (const [tag, args] of [
		["empty", []],
		["text", ["--summary", "Went another way <&> 😀"]],
		["summarize", ["--summarize"]],
	]) {
		const f = copy(file, `branch-${tag}-${name.replace(/\W/g, "")}`);
		const out = runJSON(["branch", f, target, "--json", ...args]);
		const pi = agree(f, `${name} branch ${tag}`, out.entryId);
		const entry = pi.entries[pi.entries.length - 1];
		check(entry.type === "branch_summary" && entry.parentId === target && entry.fromId === target, `${name} branch ${tag}: entry placement`, entry);
		const base = norm(piContextAt(file, target));
		if (tag === "empty") {
			check(isDeepStrictEqual(norm(pi.context), base), `${name} branch empty: context equals the context at the target`);
		} else {
			const extra = norm(pi.context).messages.slice(base.messages.length);
			check(isDeepStrictEqual(norm(pi.context).messages.slice(0, base.messages.length), base.messages) && extra.length === 1 && extra[0].role === "branchSummary",
				`${name} branch ${tag}: context is the target's plus the summary`);
		}
		if (tag === "summarize") {
			const sm = SessionManager.open(file);
			const { entries } = bs.collectEntriesForBranchSummary(sm, src.leafId, target);
			const prep = bs.prepareBranchEntries(entries, 128000 - 16384);
			const lists = utils.computeFileLists(prep.fileOps);
			if (prep.messages.length === 0) {
				check(entry.summary === "No content to summarize", `${name} branch summarize: no content`);
			} else {
				check(entry.summary.startsWith("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n") &&
					entry.summary.endsWith(utils.formatFileOperations(lists.readFiles, lists.modifiedFiles)), `${name} branch summarize: preamble and file lists`);
				check(isDeepStrictEqual(entry.details, lists) && entry.fromHook === false, `${name} branch summarize: details`, { pi: lists, sessctl: entry.details });
			}
		}
	}
}

// ---- compact ----

for (const [name, file] of sessions) {
	for (const keep of [200, 2000]) {
		const want = piPrepare(file, keep);
		if (want.refused) continue;
		const f = copy(file, `compact-${keep}-${name.replace(/\W/g, "")}`);
		const out = runJSON(["compact", f, "--json", "--keep-tokens", String(keep)]);
		const pi = agree(f, `${name} compact ${keep}`, out.entryId);
		const entry = pi.entries[pi.entries.length - 1];
		check(entry.type === "compaction" && entry.firstKeptEntryId === want.firstKeptEntryId && entry.fromHook === false, `${name} compact ${keep}: entry`, entry);
		check(isDeepStrictEqual(entry.details, { readFiles: want.readFiles, modifiedFiles: want.modifiedFiles }), `${name} compact ${keep}: details`);
		check(want.tokensBefore === null ? entry.tokensBefore === null : entry.tokensBefore === want.tokensBefore, `${name} compact ${keep}: tokensBefore`);
		check(entry.summary.endsWith(want.suffix), `${name} compact ${keep}: file lists appended as pi appends them`);
		check(pi.context.messages[0].role === "compactionSummary", `${name} compact ${keep}: context starts with the summary`);
		// pi refuses a second compaction, and keeps appending.
		check(cmp.prepareCompaction(SessionManager.open(f).getBranch(), cmp.DEFAULT_COMPACTION_SETTINGS) === undefined, `${name} compact ${keep}: pi sees it as already compacted`);
		const sm = SessionManager.open(f);
		const id = sm.appendMessage({ role: "user", content: "after compaction", timestamp: 1 });
		agree(f, `${name} compact ${keep} then a pi append`, id);
		// More work after the compaction: the next compaction updates the
		// previous summary and carries its file lists over (pi 0.73.1
		// starts its window at what the first one kept; 0.58.3 lost it).
		for (let i = 0; i < 4; i++) {
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "step ".repeat(50 * i) }, { type: "toolCall", id: `x${i}`, name: i % 2 ? "edit" : "read", arguments: { path: `after${i}.ts` } }],
				api: "a", provider: "p", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 100 + i, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "toolUse", timestamp: 2 });
			sm.appendMessage({ role: "toolResult", toolCallId: `x${i}`, toolName: "read", content: [{ type: "text", text: "r".repeat(400 * i) }], isError: false, timestamp: 3 });
			if (i === 1) sm.appendMessage({ role: "user", content: "and then?", timestamp: 4 });
		}
		for (const keep2 of [0, 50, 500, 5000]) {
			const want2 = piPrepare(f, keep2);
			const ours2 = runJSON(["compact", "--dry-run", "--json", "--keep-tokens", String(keep2), f]);
			for (const k of ["firstKeptEntryId", "tokensBefore", "isSplitTurn", "messagesToSummarize", "turnPrefixMessages", "readFiles", "modifiedFiles"]) {
				check(isDeepStrictEqual(ours2[k], want2[k]), `${name} second compaction keep ${keep2}: ${k}`, { pi: want2[k], sessctl: ours2[k] });
			}
			check(ours2.requests.length === want2.requests.length && want2.requests.every((r, i) => ours2.requests[i].kind === r.kind && ours2.requests[i].prompt.startsWith(r.head)),
				`${name} second compaction keep ${keep2}: requests (previous summary included)`, { pi: want2.requests.map((r) => r.kind), sessctl: ours2.requests.map((r) => r.kind) });
			cuts++;
		}
	}
}
console.log(`compaction preparation compared with pi on ${cuts} (session, keep) pairs, after a first compaction included`);

console.log(`${checks} checks, ${failures} failures`);
if (failures) {
	console.log(`work dir kept: ${work}`);
	process.exit(1);
}
fs.rmSync(work, { recursive: true, force: true });
