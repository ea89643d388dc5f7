package render

import (
	"io"

	"github.com/sessctl/sessctl/engine"
)

// ExportFormat returns the renderer of a document format by its name:
// "md" (or "markdown") for Markdown, "html" for HTML, "json" for JSON;
// ok is false for any other name.
func ExportFormat(name string) (render func(w io.Writer, s *Session, branch []*engine.Entry, opts Options) error, ok bool) {
	switch name {
	case "md", "markdown":
		return Markdown, true
	case "html":
		return HTML, true
	case "json":
		return JSON, true
	}
	return nil, false
}
