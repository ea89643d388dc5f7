package render

import (
	"reflect"
	"testing"
)

func TestExportFormat(t *testing.T) {
	for name, want := range map[string]any{"md": Markdown, "markdown": Markdown, "html": HTML, "json": JSON} {
		f, ok := ExportFormat(name)
		if !ok || reflect.ValueOf(f).Pointer() != reflect.ValueOf(want).Pointer() {
			t.Errorf("ExportFormat(%q): not its renderer (ok %v)", name, ok)
		}
	}
	for _, name := range []string{"", "pdf", "MD", "txt"} {
		if _, ok := ExportFormat(name); ok {
			t.Errorf("ExportFormat(%q) is a format", name)
		}
	}
}
