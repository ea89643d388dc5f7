package main

import (
	"strings"
	"testing"
)

const (
	openFile = "pkg example.com/m/engine, func OpenFile(context.Context, string) (*Session, error)"
	closeM   = "pkg example.com/m/engine, method (*Session) Close() error"
	field    = "pkg example.com/m/engine, type StoreOptions struct, Dir string"
	iface    = "pkg example.com/m/engine, type Replicator interface, Appended(string)"
	embedded = "pkg example.com/m/engine, type Info struct, embedded Header"
)

func TestAPINames(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		openFile: "OpenFile",
		closeM:   "Session.Close",
		field:    "StoreOptions.Dir",
		iface:    "Replicator.Appended",
		embedded: "Info.Header",
		"pkg example.com/m/engine, type Store struct":                 "Store",
		"pkg example.com/m/engine, const SyncEach SyncPolicy = 0":     "SyncEach",
		"pkg example.com/m/engine, var ErrNotFound error":             "ErrNotFound",
		"pkg example.com/m/engine, method (List[T]) Len() int":        "List.Len",
		"pkg example.com/m/engine, type Entry = jsonl.Entry":          "Entry",
		"pkg example.com/m/engine, type Kind uint8":                   "Kind",
		"pkg example.com/m/engine, type Entry struct, Raw []uint8":    "Entry.Raw",
		"pkg example.com/m/engine, func Decode([]uint8) (Msg, error)": "Decode",
	} {
		if got := apiNames(line); len(got) != 1 || got[0] != want {
			t.Errorf("apiNames(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	old := []string{openFile, closeM, field, iface}
	cur := []string{closeM, field, iface, strings.Replace(openFile, "string)", "string, Options)", 1), embedded}
	var out strings.Builder
	if report(&out, "v0.1.0.txt", old, cur, "### Added\n- nothing relevant\n") {
		t.Errorf("a changed signature without a changelog entry passed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "not in CHANGELOG's Unreleased section: "+openFile) || !strings.Contains(out.String(), "added since v0.1.0.txt: "+embedded) {
		t.Errorf("report:\n%s", out.String())
	}
	for _, log := range []string{
		"### Changed\n- `engine.OpenFile` takes Options.\n",
		"### Changed\n- `OpenFile(ctx, path, o)` takes Options.\n",
		"### Changed\n- `OpenFile` takes Options.\n",
	} {
		out.Reset()
		if !report(&out, "v0.1.0.txt", old, cur, log) {
			t.Errorf("changelog %q: the change was not taken as noted:\n%s", log, out.String())
		}
	}
	for _, log := range []string{
		"### Changed\n- OpenFile takes Options.\n",          // not in backquotes
		"### Changed\n- `ReOpenFile` is new.\n",             // another name
		"### Changed\n- `OpenFileX` is new.\n",              // a longer name
		"### Changed\n- `x` and OpenFile and `y` changed\n", // outside the quotes
	} {
		out.Reset()
		if report(&out, "v0.1.0.txt", old, cur, log) {
			t.Errorf("changelog %q: taken as naming OpenFile:\n%s", log, out.String())
		}
	}
	removed := []string{openFile, field, iface}
	out.Reset()
	if report(&out, "v0.1.0.txt", old, removed, "### Removed\n- `Session.Close`: sessions close themselves.\n") != true {
		t.Errorf("a removed method named Type.Method was not taken as noted:\n%s", out.String())
	}
	out.Reset()
	if report(&out, "v0.1.0.txt", old, removed, "### Removed\n- `Close`\n") {
		t.Errorf("a removed method named without its type passed:\n%s", out.String())
	}
}

func TestUnreleased(t *testing.T) {
	t.Parallel()
	log := "# Changelog\n\n## [Unreleased]\n\n### Removed\n- `A`\n\n## [0.1.0] - 2026-11-27\n\n### Added\n- `B`\n"
	got := unreleased(log)
	if !strings.Contains(got, "`A`") || strings.Contains(got, "`B`") {
		t.Errorf("unreleased = %q", got)
	}
}

func TestVersionOrder(t *testing.T) {
	t.Parallel()
	files := []string{"api/v0.10.0.txt", "api/v0.9.3.txt", "api/v1.0.0.txt", "api/v0.1.0.txt"}
	newest := files[0]
	for _, f := range files[1:] {
		if versionLess(newest, f) {
			newest = f
		}
	}
	if newest != "api/v1.0.0.txt" || !versionLess("api/v0.9.3.txt", "api/v0.10.0.txt") {
		t.Errorf("newest %s", newest)
	}
}

// TestMovedPackage: a package the changelog says moved keeps its API when
// every line is there under the new path, and only then.
func TestMovedPackage(t *testing.T) {
	t.Parallel()
	old := []string{openFile, closeM}
	moved := []string{
		strings.Replace(openFile, "m/engine,", "m/core,", 1),
		strings.Replace(closeM, "m/engine,", "m/core,", 1),
	}
	var out strings.Builder
	if !report(&out, "v0.1.0.txt", old, moved, "### Changed\n- `engine` moved to `core`.\n") {
		t.Errorf("a moved package was not taken as noted:\n%s", out.String())
	}
	out.Reset()
	if report(&out, "v0.1.0.txt", old, moved[:1], "### Changed\n- `engine` moved to `core`.\n") {
		t.Errorf("a method lost in the move passed:\n%s", out.String())
	}
	out.Reset()
	if report(&out, "v0.1.0.txt", old, moved, "### Changed\n- `engine` moved to `other`.\n") {
		t.Errorf("a move to another path passed:\n%s", out.String())
	}
}
