// pi-reference.mjs: report pi's own view of session files, for the
// differential tests that compare sessctl with pi
// (engine/pireference_test.go, cmd/sessctl's compact test).
//
// Usage: node pi-reference.mjs NODE_MODULES < REQUEST.json > ANSWER.json
//
// NODE_MODULES is a folder where pi was npm-installed
// (scripts/pi-install.sh), or its node_modules. The request is one JSON
// object; every member is optional:
//
//   states:      [FILE...]  SessionManager.open(FILE): the state object of
//                the pi conformance corpus (sessionId, sessionFile,
//                sessionDir, cwd, isPersisted, header, leafId, leafEntryId,
//                sessionName, entries, branch, tree, children, labels,
//                context); tree nodes are {id, type, label?,
//                labelTimestamp?, children}.
//   cwdOverride: CWD        also open each of states with
//                open(FILE, undefined, CWD) and report getCwd()
//                ("cwdOverride" in its state; pi 0.73.1 and later).
//   lists:       [[CWD, DIR]...]  SessionManager.list(CWD, DIR), dates as
//                ISO strings (null when invalid).
//   prepare:     {files: [FILE...], keeps: [N...], reserve: N}
//                prepareCompaction(getBranch(), settings) per file and
//                keepRecentTokens: {nothing: true} when pi returns
//                undefined, else firstKeptEntryId, tokensBefore (null for
//                NaN), isSplitTurn, the counts messagesToSummarize and
//                turnPrefixMessages and their roles
//                (messagesToSummarizeRoles, turnPrefixRoles),
//                previousSummary (null when none),
//                readFiles, modifiedFiles, thinkingLevel (the session's, as
//                buildSessionContext gives it) and requests: what compact()
//                sent for that preparation and thinking level to a
//                reasoning model ({maxTokens, reasoning or null}), in the
//                order sent (the history request first, when there is one,
//                then the turn prefix).
//   branches:    [{file, leafId}...]  createBranchedSession(leafId) on a
//                copy of file made by pi itself: the new file's entries
//                (in memory; null when pi threw) or error.
//   contextsAt:  [[FILE, LEAF_ID]...]  buildSessionContext(getEntries(),
//                LEAF_ID) of FILE.
//   sessionDirs: [[CWD, AGENT_DIR]...]  getDefaultSessionDir(CWD,
//                AGENT_DIR) (pi 0.73.1 and later; it creates the
//                directory, as pi does).
//
// The answer has the same members, keyed by file (states, prepare), in
// order (lists, branches, contextsAt, sessionDirs), plus "version", the
// pi release.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modulesArg] = process.argv.slice(2);
if (!modulesArg) {
	console.error("usage: node pi-reference.mjs NODE_MODULES < REQUEST.json");
	process.exit(2);
}
const modules = fs.existsSync(path.join(modulesArg, "node_modules")) ? path.join(modulesArg, "node_modules") : modulesArg;
// pi is @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent before.
const scope = ["@earendil-works", "@mariozechner"].find((s) => fs.existsSync(path.join(modules, s, "pi-coding-agent"))) ?? "@earendil-works";
const pkg = path.join(modules, scope, "pi-coding-agent");
const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
const load = (p) => import(pathToFileURL(p).href);
const smod = await load(path.join(pkg, "dist/core/session-manager.js"));
const { SessionManager } = smod;
const cmp = await load(path.join(pkg, "dist/core/compaction/compaction.js"));
const utils = await load(path.join(pkg, "dist/core/compaction/utils.js"));
// pi-ai 1.x keeps the api registry in its compat entry point.
const aiCompat = path.join(modules, scope, "pi-ai/dist/compat.js");
const ai = await load(fs.existsSync(aiCompat) ? aiCompat : path.join(modules, scope, "pi-ai/dist/index.js"));

const req = JSON.parse(fs.readFileSync(0, "utf8"));
const answer = { version };

function reduceTree(nodes) {
	return nodes.map((n) => {
		const o = { id: n.entry.id, type: n.entry.type };
		if (n.label !== undefined) o.label = n.label;
		if (n.labelTimestamp !== undefined) o.labelTimestamp = n.labelTimestamp;
		o.children = reduceTree(n.children);
		return o;
	});
}

function state(sm) {
	const entries = sm.getEntries();
	const children = {};
	const labels = {};
	for (const e of entries) {
		if (e.id === undefined) continue;
		children[e.id] = sm.getChildren(e.id).map((c) => c.id);
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	const leaf = sm.getLeafEntry();
	return {
		sessionId: sm.getSessionId(),
		sessionFile: sm.getSessionFile() ?? null,
		sessionDir: sm.getSessionDir(),
		cwd: sm.getCwd(),
		isPersisted: sm.isPersisted(),
		header: sm.getHeader(),
		leafId: sm.getLeafId() === undefined ? "<undefined>" : sm.getLeafId(),
		leafEntryId: leaf ? leaf.id : null,
		sessionName: sm.getSessionName() ?? null,
		entries,
		branch: sm.getBranch().map((e) => e.id),
		tree: reduceTree(sm.getTree()),
		children,
		labels,
		context: sm.buildSessionContext(),
	};
}

if (req.states) {
	answer.states = {};
	for (const f of req.states) {
		const st = state(SessionManager.open(f));
		if (req.cwdOverride !== undefined) st.cwdOverride = SessionManager.open(f, undefined, req.cwdOverride).getCwd();
		answer.states[f] = JSON.parse(JSON.stringify(st));
	}
}

if (req.lists) {
	answer.lists = [];
	for (const [cwd, dir] of req.lists) {
		answer.lists.push(JSON.parse(JSON.stringify(await SessionManager.list(cwd, dir))));
	}
}

// A model whose requests are recorded instead of sent.
const captured = [];
const api = "sessctl-reference-capture";
ai.registerApiProvider({
	api,
	stream: () => {
		throw new Error("not used");
	},
	streamSimple: (model, context, options) => {
		captured.push({ maxTokens: options?.maxTokens ?? null, reasoning: options?.reasoning ?? null });
		const s = ai.createAssistantMessageEventStream();
		const message = {
			role: "assistant", content: [{ type: "text", text: "summary" }], api, provider: "capture", model: "capture",
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "stop", timestamp: 0,
		};
		queueMicrotask(() => {
			s.push({ type: "done", reason: "stop", message });
			s.end(message);
		});
		return s;
	},
});
const model = { id: "capture", name: "capture", api, provider: "capture", baseUrl: "http://127.0.0.1:9", reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 64000 };

async function requestsOf(prep, thinkingLevel) {
	captured.length = 0;
	const signal = new AbortController().signal;
	if (cmp.compact.length >= 7) {
		// compact(preparation, model, apiKey, headers, customInstructions, signal, thinkingLevel)
		await cmp.compact(prep, model, "key", undefined, undefined, signal, thinkingLevel);
	} else {
		// pi 0.58.3: compact(preparation, model, apiKey, customInstructions, signal)
		await cmp.compact(prep, model, "key", undefined, signal);
	}
	return captured.slice();
}

if (req.prepare) {
	answer.prepare = {};
	const settings = (keep) => ({ enabled: true, reserveTokens: req.prepare.reserve ?? 16384, keepRecentTokens: keep });
	for (const f of req.prepare.files) {
		const sm = SessionManager.open(f);
		const branch = sm.getBranch();
		const thinkingLevel = sm.buildSessionContext().thinkingLevel;
		const byKeep = {};
		for (const keep of req.prepare.keeps) {
			const prep = cmp.prepareCompaction(branch, settings(keep));
			if (!prep) {
				byKeep[keep] = { nothing: true };
				continue;
			}
			const lists = utils.computeFileLists(prep.fileOps);
			byKeep[keep] = {
				firstKeptEntryId: prep.firstKeptEntryId,
				tokensBefore: Number.isNaN(prep.tokensBefore) ? null : prep.tokensBefore,
				isSplitTurn: prep.isSplitTurn,
				messagesToSummarize: prep.messagesToSummarize.length,
				turnPrefixMessages: prep.turnPrefixMessages.length,
				messagesToSummarizeRoles: prep.messagesToSummarize.map((m) => m.role),
				turnPrefixRoles: prep.turnPrefixMessages.map((m) => m.role),
				previousSummary: prep.previousSummary ?? null,
				readFiles: lists.readFiles,
				modifiedFiles: lists.modifiedFiles,
				thinkingLevel: thinkingLevel ?? null,
				requests: await requestsOf(prep, thinkingLevel),
			};
		}
		answer.prepare[f] = byKeep;
	}
}

if (req.branches) {
	answer.branches = [];
	const work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-reference-"));
	for (const [i, { file, leafId }] of req.branches.entries()) {
		const dir = path.join(work, String(i));
		fs.mkdirSync(dir);
		const copy = path.join(dir, path.basename(file));
		fs.copyFileSync(file, copy);
		try {
			const sm = SessionManager.open(copy);
			sm.createBranchedSession(leafId);
			answer.branches.push({ entries: JSON.parse(JSON.stringify(sm.getEntries())) });
		} catch (e) {
			answer.branches.push({ entries: null, error: String(e?.message ?? e) });
		}
	}
	fs.rmSync(work, { recursive: true, force: true });
}

if (req.contextsAt) {
	answer.contextsAt = req.contextsAt.map(([file, leafId]) =>
		JSON.parse(JSON.stringify(smod.buildSessionContext(SessionManager.open(file).getEntries(), leafId))));
}

if (req.sessionDirs) {
	answer.sessionDirs = req.sessionDirs.map(([cwd, agentDir]) => smod.getDefaultSessionDir?.(cwd, agentDir) ?? null);
}

process.stdout.write(`${JSON.stringify(answer)}\n`);
