package web

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/redact"
)

// Exports: the branch a page shows as Markdown, HTML or JSON (package
// render's documents, those of 'sessctl export'), masked by package redact
// unless redact=0 is asked for, and always sent as a download (never
// shown in the viewer's own origin). Redaction fails closed: when a line
// cannot be masked the download is cut off (the connection is aborted),
// and nothing unmasked was sent.

var exportTypes = map[string]struct{ ext, ctype string }{
	"md":   {"md", "text/markdown; charset=utf-8"},
	"html": {"html", "text/html; charset=utf-8"},
	"json": {"json", "application/json"},
}

func (h *Handler) serveExport(w http.ResponseWriter, r *http.Request) {
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	q := r.URL.Query()
	format := q.Get("format")
	t, ok := exportTypes[format]
	if !ok {
		h.failPage(w, r, &refusedError{fmt.Sprintf("no export format %q: md, html or json", format)})
		return
	}
	v, err := h.views.get(r.Context(), path, h.o.leanMin)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	v.mu.RLock()
	st := v.st
	ix := st.ix
	leaf, _ := ix.Leaf()
	at := q.Get("at")
	if at == "" {
		at = leaf
	} else if !ix.Has(at) {
		v.mu.RUnlock()
		h.failPage(w, r, &engine.EntryError{Name: at})
		return
	}
	var branch []*jsonl.Entry
	if at != "" {
		branch, err = v.filled(ix.Branch(at))
	}
	rs := &render.Session{Path: path, Header: st.header, Leaf: at, Labels: map[string]string{}}
	rs.Name, rs.HasName = ix.Name()
	for _, lp := range ix.Labels() {
		rs.Labels[lp.Target] = lp.Label
	}
	rs.Entries = branch
	id, _ := jsonl.String(mustID(&st.header.Entry))
	v.mu.RUnlock()
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	var opts render.Options
	masked := q.Get("redact") != "0"
	if masked {
		opts.Redactor = h.redactor
	}
	name := "session-" + render.ShortID(id)
	if masked {
		name += "-redacted"
	}
	w.Header().Set("Content-Type", t.ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFileName(name)+"."+t.ext+`"`)
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "md":
		err = render.Markdown(bw, rs, branch, opts)
	case "html":
		err = render.HTML(bw, rs, branch, opts)
	case "json":
		err = render.JSON(bw, rs, branch, opts)
	}
	if err != nil {
		// The headers are sent: the download must fail, not end looking
		// complete. (After a redaction error what was sent is masked;
		// the rest never will be.)
		h.logf("export %s: %v", path, err)
		panic(http.ErrAbortHandler)
	}
	_ = bw.Flush()
}

// serveExportAgentUse exports an AgentUse session: everything stored for
// it as JSON (render.AgentUseJSON, the document of 'sessctl dump'), or its
// transcript as text; masked unless redact=0 (the JSON's string values,
// by redact.Entry, the transcript's text by redact.String).
func (h *Handler) serveExportAgentUse(w http.ResponseWriter, r *http.Request) {
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
	q := r.URL.Query()
	masked := q.Get("redact") != "0"
	var buf bytes.Buffer
	var ext, ctype string
	switch q.Get("format") {
	case "json":
		ext, ctype = "json", "application/json"
		err = render.AgentUseJSON(&buf, c)
		if err == nil && masked {
			var out []byte
			if out, err = redact.Entry(bytes.TrimSpace(buf.Bytes())); err == nil {
				buf.Reset()
				if out, err = jsonl.Indent(nil, out); err == nil {
					buf.Write(out)
					buf.WriteByte('\n')
				}
			}
		}
	case "txt":
		ext, ctype = "txt", "text/plain; charset=utf-8"
		err = render.AgentUseTranscript(&buf, c, true)
		if err == nil && masked {
			s := redact.String(buf.String())
			buf.Reset()
			buf.WriteString(s)
		}
	default:
		h.failPage(w, r, &refusedError{"no export format " + q.Get("format") + " for an AgentUse session: json or txt"})
		return
	}
	if err != nil {
		h.failPage(w, r, fmt.Errorf("export %s: %w", dir, err))
		return
	}
	name := "agentuse-" + render.ShortID(c.Info.ID)
	if masked {
		name += "-redacted"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFileName(name)+"."+ext+`"`)
	_, _ = w.Write(buf.Bytes())
}

// safeFileName keeps letters, digits, '-' and '_'.
func safeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
