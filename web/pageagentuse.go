package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
)

// AgentUse sessions: a transcript of the messages and their parts in
// AgentUse's order, the session's subagents as its tree, live updates when
// its files change. AgentUse has no entry tree: the acts (fork, branch,
// label, rename) are for JSONL sessions only.

type agentUsePage struct {
	page
	Info      auInfo
	Entries   []entryCtx
	Children  []linkText
	ParentURL string
	EventsURL string
	Holder    string
	Export    string
	Problems  []string
}

type auInfo struct {
	ID, Agent, Model, Status, Trigger, Created, Updated, Dir, Cwd, Error string
}

// readAgentUse reads the AgentUse session directory dir, in a store on the
// directory that holds its top-level session.
func (h *Handler) readAgentUse(r *http.Request, dir string) (*agentuse.Contents, error) {
	top := dir
	for filepath.Base(filepath.Dir(top)) == layout.AgentUseSubagentDir {
		top = filepath.Dir(filepath.Dir(top))
	}
	st, err := agentuse.OpenStore(r.Context(), agentuse.StoreOptions{Dir: filepath.Dir(top), FS: h.fs()})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	x, err := st.Resolve(r.Context(), dir)
	if err != nil {
		return nil, err
	}
	return st.Read(r.Context(), x)
}

func (h *Handler) serveAgentUse(w http.ResponseWriter, r *http.Request) {
	_, dir, err := h.sessionRef(r, layout.FormatAgentUse)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	c, err := h.readAgentUse(r, dir)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	x := c.Info
	self := h.sessionURL(dir, layout.FormatAgentUse)
	p := agentUsePage{page: h.page(r, "AgentUse "+human.Or(x.AgentName, x.AgentID)),
		EventsURL: strings.Replace(self, "/a/", "/events/a/", 1), Export: strings.Replace(self, "/a/", "/export/a/", 1)}
	var watched bool
	if p.Holder, watched = h.watchedHolder(dir, true); !watched {
		p.Holder = h.agentUseHolder(dir, nil)
	}
	p.Info = auInfo{ID: x.ID, Agent: human.Or(x.AgentName, x.AgentID), Model: x.Model, Status: x.Status, Trigger: x.Trigger, Dir: dir, Error: x.ErrorCode}
	if x.Created > 0 {
		p.Info.Created = clock(time.UnixMilli(x.Created))
	}
	if x.Updated > 0 {
		p.Info.Updated = clock(time.UnixMilli(x.Updated))
	}
	var doc struct {
		Project struct {
			Cwd string `json:"cwd"`
		} `json:"project"`
	}
	if json.Unmarshal(x.Raw, &doc) == nil {
		p.Info.Cwd = doc.Project.Cwd
	}
	if x.Parent != nil {
		p.ParentURL = h.sessionURL(x.Parent.Dir, layout.FormatAgentUse)
	}
	for _, ch := range x.Children {
		p.Children = append(p.Children, linkText{URL: h.sessionURL(ch.Dir, layout.FormatAgentUse),
			Text: human.Or(ch.AgentName, ch.AgentID) + " (" + h.list.get(0).shortID(ch.Dir, ch.ID) + ", " + human.Or(ch.Status, "no status") + ")"})
	}
	for _, m := range c.Messages {
		p.Entries = append(p.Entries, entryCtx{E: agentUseMessage(m)})
	}
	for _, pr := range c.Problems {
		p.Problems = append(p.Problems, pr.Error())
	}
	for _, sk := range c.Skipped {
		p.Problems = append(p.Problems, sk.Error())
	}
	h.render(w, r, http.StatusOK, "agentuse", p)
}

// agentUseMessage is one AgentUse message (a user and assistant exchange)
// with its parts, as a transcript entry.
func agentUseMessage(m *agentuse.Message) entryItem {
	it := entryItem{ID: m.ID, Kind: "assistant", Head: "message"}
	if m.HasCreated {
		it.Time = clock(time.UnixMilli(m.Created))
	}
	if m.Err != nil {
		it.Blocks = append(it.Blocks, block{Kind: "note", Err: true, Text: m.Err.Error()})
	}
	var doc struct {
		User struct {
			Prompt struct {
				Task string `json:"task"`
				User string `json:"user"`
			} `json:"prompt"`
		} `json:"user"`
		Assistant struct {
			ModelID string `json:"modelID"`
		} `json:"assistant"`
	}
	_ = json.Unmarshal(m.Raw, &doc)
	meta := []string{}
	if doc.Assistant.ModelID != "" {
		meta = append(meta, doc.Assistant.ModelID)
	}
	if t := m.Tokens; t.Input+t.Output > 0 {
		meta = append(meta, fmt.Sprintf("%s in, %s out", count(t.Input), count(t.Output)))
	}
	it.Meta = strings.Join(meta, " · ")
	if doc.User.Prompt.Task != "" {
		it.Blocks = append(it.Blocks, collapsible("task", doc.User.Prompt.Task, false))
	}
	if doc.User.Prompt.User != "" {
		b := textBlock(doc.User.Prompt.User)
		b.Summary = "user"
		it.Blocks = append(it.Blocks, block{Kind: "note", Text: "user prompt:"}, b)
	}
	for _, pt := range m.Parts {
		it.Blocks = append(it.Blocks, agentUsePart(pt))
	}
	return it
}

// agentUsePart shows one part.
func agentUsePart(pt *agentuse.PartInfo) block {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(pt.Raw, &d); err != nil {
		return block{Kind: "note", Err: true, Text: "part " + pt.ID + ": " + err.Error()}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(d[k], &s)
		return s
	}
	switch pt.Type {
	case "text":
		if pt.Role == "user" {
			b := textBlock(str("text"))
			b.Kind = "text user"
			return b
		}
		return textBlock(str("text"))
	case "reasoning":
		b := collapsible("thinking", str("text"), false)
		b.Kind = "thinking"
		return b
	case "tool":
		var state map[string]json.RawMessage
		_ = json.Unmarshal(d["state"], &state)
		text := "input:\n" + indentJSON(state["input"])
		if o, ok := state["output"]; ok {
			var s string
			if json.Unmarshal(o, &s) == nil {
				text += "\n\noutput:\n" + s
			} else {
				text += "\n\noutput:\n" + indentJSON(o)
			}
		}
		var errText string
		if e, ok := state["error"]; ok {
			_ = json.Unmarshal(e, &errText)
			text += "\n\nerror:\n" + errText
		}
		b := collapsible("call", text, false)
		b.Kind = "call"
		b.Summary = "→ " + pt.Tool + " " + human.OneLine(string(state["input"]), 140) + " · " + pt.Status
		b.Err = pt.Status == "error"
		return b
	case "error":
		return block{Kind: "note", Err: true, Text: "error (" + str("source") + ") " + str("code") + ": " + str("message")}
	case "log":
		return block{Kind: "note", Text: "log " + str("level") + ": " + str("message")}
	}
	b := collapsible(pt.Type, indentJSON(pt.Raw), false)
	return b
}

// serveAgentUseEvents is the event stream of an AgentUse session page: it
// says "changed" when a file of the session changes (AgentUse replaces
// files whole, so the page reads the session again), and who holds its
// writer lock.
func (h *Handler) serveAgentUseEvents(w http.ResponseWriter, r *http.Request) {
	_, dir, err := h.sessionRef(r, layout.FormatAgentUse)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) bool {
		b, _ := json.Marshal(data)
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		fl.Flush()
		return err == nil
	}
	// The files as they are when the stream starts, before the page is
	// told anything: a change after the first event is a change.
	print := h.dirPrint(r.Context(), dir)
	hw, release := h.watchHolder(dir, true)
	defer release()
	select {
	case <-hw.ready:
	case <-r.Context().Done():
		return
	case <-h.ctx.Done():
		return
	}
	last, holderChanged := hw.current()
	if !send("holder", last) {
		return
	}
	tick := time.NewTicker(max(h.o.FollowInterval, 500*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.ctx.Done():
			return
		case <-tick.C:
			if p := h.dirPrint(r.Context(), dir); p != print {
				print = p
				if !send("changed", true) {
					return
				}
			}
		case <-holderChanged:
			var t string
			t, holderChanged = hw.current()
			if t != last {
				last = t
				if !send("holder", t) {
					return
				}
			}
		}
	}
}

// dirPrint is the fingerprint of the data files of an AgentUse session
// directory (agentuse.Fingerprint of its *.json files, subagents' left
// out); the zero value when it cannot be read.
func (h *Handler) dirPrint(ctx context.Context, dir string) [2]int64 {
	files, _, err := agentuse.DirFiles(ctx, h.fs(), dir, false)
	if err != nil {
		return [2]int64{}
	}
	data := files[:0]
	for _, f := range files {
		if f.Mode.IsRegular() && layout.IsAgentUseDataFile(path.Base(f.Rel)) {
			data = append(data, f)
		}
	}
	size, print := agentuse.Fingerprint(data)
	return [2]int64{size, print}
}
