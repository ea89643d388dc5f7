package search

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
)

// TextOptions say how Hit.WriteText writes a hit.
type TextOptions struct {
	// ID is the session's id as shown (a short one); "" shows the full id.
	ID string
	// Highlight writes MatchStart and MatchEnd around each match (a
	// terminal's colours). The writer is then a terminal's that escapes
	// nothing itself: Escape is applied to every text written but those.
	Highlight            bool
	MatchStart, MatchEnd string
	Escape               func(string) string
	// Command is the command line that shows the hit, written
	// shell-quoted on the hit's last line.
	Command []string
}

// WriteText writes the hit for people, as 'sessctl search' does: a line
// with its time, label, entry, session id, name and cwd, the snippet
// (indented) and the command that shows it, then a blank line.
func (h *Hit) WriteText(w io.Writer, o TextOptions) error {
	var b strings.Builder
	when := "-"
	if !h.Time.IsZero() {
		when = h.Time.Format("2006-01-02 15:04:05")
	}
	entry := ""
	if h.Entry != "" {
		entry = " [" + human.QuotePath(h.Entry) + "]"
	}
	safe := func(s string) string {
		if o.Highlight && o.Escape != nil {
			return o.Escape(s)
		}
		return s
	}
	name := ""
	if h.Session.Name != "" {
		name = " " + human.Quote(h.Session.Name)
	}
	id := o.ID
	if id == "" {
		id = h.Session.ID
	}
	fmt.Fprintf(&b, "%s  %s%s  %s%s  %s\n", when, safe(human.QuotePath(h.Label())), safe(entry), safe(human.QuotePath(id)), safe(name), human.QuotePath(h.Session.Cwd))
	b.WriteString("    ")
	last := 0
	for _, m := range h.Matches {
		b.WriteString(safe(h.Snippet[last:m[0]]))
		if o.Highlight {
			b.WriteString(o.MatchStart)
		}
		b.WriteString(safe(h.Snippet[m[0]:m[1]]))
		if o.Highlight {
			b.WriteString(o.MatchEnd)
		}
		last = m[1]
	}
	b.WriteString(safe(h.Snippet[last:]))
	b.WriteString("\n    ")
	for i, a := range o.Command {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(human.ShellQuote(a))
	}
	b.WriteString("\n\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the hit as one line of JSON (Hit.JSON), with command,
// the command line that shows it, as "show" after its members.
func (h *Hit) WriteJSON(w io.Writer, command []string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		*HitJSON
		Show []string `json:"show"`
	}{h.JSON(), command})
}
