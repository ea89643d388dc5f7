// Package web is sessctl's session viewer as an http.Handler: a local web
// app over every store sessctl knows (pi's and indusagi's JSONL session
// trees, the sessions sessctl imported into them, AgentUse part/message
// directories), which an agent can mount in its own server and which
// 'sessctl serve' runs on a loopback port.
//
//	h, err := web.New(web.Options{Addr: ln.Addr().String()})
//	if err != nil {
//		return err
//	}
//	defer h.Close()
//	fmt.Println("open", h.URL()) // http://127.0.0.1:PORT/?token=...
//	return http.Serve(ln, h)
//
// # Pages
//
// The session list (newest first, with working directory, name, agent,
// size and cost; filtered by working directory and date; children and
// forks under their parent), a session as the transcript of its active
// branch (thinking, tool calls and results collapsible, paged so that a
// session of hundreds of megabytes is never read whole) beside its whole
// tree (branches, labels, branch summaries, compactions; an entry's link
// shows the branch that ends there), full-text search across the stores
// with the filters of 'sessctl search', and tokens and cost per model and
// per day. Everything is rendered on the server with html/template from
// embedded templates, styles and a small script: nothing is loaded from
// anywhere else, and the pages work without the script (it adds the live
// updates and fills in costs).
//
// # Live
//
// A session page follows its file while it is open (server-sent events
// fed by the engine's follow of the file, Tail.Follow, which reads only
// what is appended): entries another process appends, sessctl's engine or
// pi, appear in the page as they are written, and the page says who is
// writing: the holder of the writer lock ("written by pid 4821 (sessctl)
// on devbox since 10:22"), or, since pi takes no lock, that the file grows
// without one and, when it can be seen in /proc, which process has it open
// for writing. The writer is looked up once per change of the session for
// all the pages that follow it, never while it is idle.
//
// # Acts
//
// Fork from an entry, branch at an entry with a summary, label an entry and
// rename a session: each goes through the engine (engine.Store.Fork, and
// Session.BranchWithSummary, AppendLabelChange and AppendSessionInfo under
// the session's writer lock), and is refused, naming the holder, while
// another writer holds the session. Nothing else writes; exports (Markdown,
// HTML, JSON) are masked by package redact unless asked otherwise.
//
// # Security
//
// Every request must carry the handler's token in the URL (?token=...),
// which sets a cookie and redirects to the URL without it, or that
// cookie. The cookie is not the token but a secret drawn anew by every
// New (a server start), named after the port (sessctl-PORT: browsers send
// a cookie of 127.0.0.1 to every port, and a name of one viewer's never
// stands for another's), HttpOnly and SameSite=Strict. The Host header must name the
// address the server is bound to, so that a page of another site cannot
// reach it through a DNS name that resolves to loopback (DNS rebinding).
// Writes are POST requests carrying a CSRF token from the page, and a
// cross-site Origin or Sec-Fetch-Site is refused. Only the sessions the
// configured stores' walks yield as their own are read, listed and found
// (engine.Store.Files without its links; agentuse.Walk): none in .trash,
// none through a symbolic link. Only the embedded assets are served as
// files. Every text of a session is escaped
// by html/template, and every response carries a Content-Security-Policy
// that allows scripts, styles and connections from the handler only.
//
// The handler never prints and never exits; errors it meets while serving
// go to Options.Logf.
package web
