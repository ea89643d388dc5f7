// sessctl serve: what the pages do with a script (they work without it):
// live updates of a session being written, the cost column of the list,
// expanding and collapsing a transcript's folded blocks. Plain JavaScript,
// no library, no build step; it talks only to the server that sent it.
"use strict";
(function () {
  document.body.classList.add("js");
  const base = document.body.dataset.base || "";
  const $ = (id) => document.getElementById(id);

  // Expand or collapse every folded block (thinking, tool calls, results).
  const fold = (open) => () => document.querySelectorAll("#transcript details.fold").forEach((d) => { d.open = open; });
  if ($("expand")) $("expand").addEventListener("click", fold(true));
  if ($("collapse")) $("collapse").addEventListener("click", fold(false));

  // The list's cost column: the costs the server had not counted yet,
  // asked for in batches.
  const cells = Array.from(document.querySelectorAll("td[data-cost]"));
  (async function () {
    for (let i = 0; i < cells.length; i += 40) {
      const batch = cells.slice(i, i + 40);
      const q = new URLSearchParams();
      batch.forEach((c) => q.append("k", c.dataset.cost));
      try {
        const r = await fetch(base + "/api/usage?" + q.toString(), { credentials: "same-origin" });
        if (!r.ok) return;
        const m = await r.json();
        batch.forEach((c) => {
          if (m[c.dataset.cost] !== undefined) c.textContent = m[c.dataset.cost];
          c.removeAttribute("data-cost");
        });
      } catch (e) {
        return;
      }
    }
  })();

  const holder = $("holder");
  const showHolder = (t) => {
    if (!holder) return;
    holder.textContent = t;
    holder.classList.toggle("active", !t.startsWith("no writer"));
  };
  const note = $("livenote");
  const say = (text, href, linkText) => {
    if (!note) return;
    note.hidden = false;
    note.textContent = text + " ";
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = linkText;
      note.appendChild(a);
    }
  };

  // A JSONL session being written: entries appended to the branch shown
  // are added to the transcript; the tree beside it is fetched again.
  const sess = document.querySelector(".session[data-live]");
  if (sess && window.EventSource) {
    let last = sess.dataset.last || "";
    const list = $("entries");
    const tree = $("tree");
    let treeTimer = null;
    const refreshTree = () => {
      if (treeTimer) return;
      treeTimer = setTimeout(async () => {
        treeTimer = null;
        try {
          const r = await fetch(sess.dataset.tree, { credentials: "same-origin" });
          if (r.ok && tree) tree.innerHTML = await r.text();
        } catch (e) { /* the next event tries again */ }
      }, 300);
    };
    const es = new EventSource(sess.dataset.live);
    es.addEventListener("open", () => { sess.dataset.connected = "1"; });
    es.addEventListener("holder", (ev) => showHolder(JSON.parse(ev.data)));
    es.addEventListener("entries", (ev) => {
      const batch = JSON.parse(ev.data) || [];
      let elsewhere = false;
      const nearEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 200;
      for (const e of batch) {
        if (e.target) {
          document.querySelectorAll('[data-label-of="' + CSS.escape(e.target) + '"]').forEach((s) => {
            s.textContent = e.label || "";
            s.hidden = !e.label;
          });
        }
        if (e.name && $("title")) $("title").textContent = e.name;
        if ($("e-" + e.id)) continue;
        if (!last || e.parent === last) {
          const t = document.createElement("template");
          t.innerHTML = e.html;
          const li = t.content.firstElementChild;
          if (!li) continue;
          li.classList.add("fresh");
          list.appendChild(li);
          setTimeout(() => li.classList.remove("fresh"), 4000);
          last = e.id;
          const empty = document.querySelector("#transcript > p.empty");
          if (empty) empty.remove();
        } else {
          elsewhere = true;
        }
      }
      if (elsewhere) say("New entries were written on another branch.", location.pathname, "Show the active branch");
      if (nearEnd) window.scrollTo(0, document.body.scrollHeight);
      refreshTree();
    });
    es.addEventListener("gone", (ev) => {
      say(JSON.parse(ev.data));
      es.close();
    });
  }

  // An AgentUse session: its files are replaced whole, so a change reloads
  // the page (unless a form is being filled in).
  const au = document.querySelector(".session[data-live-au]");
  if (au && window.EventSource) {
    const es = new EventSource(au.dataset.liveAu);
    es.addEventListener("holder", (ev) => showHolder(JSON.parse(ev.data)));
    es.addEventListener("changed", () => {
      const a = document.activeElement;
      if (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT")) {
        say("The session changed.", location.href, "Reload");
        return;
      }
      location.reload();
    });
  }
})();
