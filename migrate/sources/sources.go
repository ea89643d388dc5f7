// Package sources lists every importer of a foreign agent's sessions, in
// the order 'sessctl import --all' runs them.
package sources

import (
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/agsh"
	"github.com/sessctl/sessctl/migrate/claude"
	"github.com/sessctl/sessctl/migrate/codex"
	"github.com/sessctl/sessctl/migrate/crush"
	"github.com/sessctl/sessctl/migrate/cursor"
	"github.com/sessctl/sessctl/migrate/gemini"
	"github.com/sessctl/sessctl/migrate/goose"
	"github.com/sessctl/sessctl/migrate/opencode"
	"github.com/sessctl/sessctl/migrate/windsurf"
)

// All returns every importer.
func All() []migrate.Source {
	return []migrate.Source{
		claude.Source{},
		codex.Source{},
		gemini.Source{},
		cursor.Source{},
		windsurf.Source{},
		opencode.Source{},
		agsh.Source{},
		goose.Source{},
		crush.Source{},
	}
}

// ByName returns the importer with the given Name.
func ByName(name string) (migrate.Source, bool) {
	for _, s := range All() {
		if s.Name() == name {
			return s, true
		}
	}
	return nil, false
}

// Names returns the Name of every importer, in All's order.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name())
	}
	return names
}

// Titles returns the Title of every importer, in All's order.
func Titles() []string {
	var titles []string
	for _, s := range All() {
		titles = append(titles, s.Title())
	}
	return titles
}
