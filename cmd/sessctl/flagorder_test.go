package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Flags may come anywhere on the command line, for every command: one
// parser (env.parse) serves them all. These tests go over the commands
// map, so a new command is covered (or the test asks for its case).

// flagOrderFixture is what a flag-order case runs in: a fresh copy of
// the same files under root.
type flagOrderFixture struct {
	root    string   // the copy's directory, replaced by /ROOT in outputs
	session string   // a pi session file in the store at root/agent
	ids     []string // its entry ids, in file order
	dir     string   // its session directory
}

// flagOrderCase gives a command's positional arguments and flags (each
// flag with its value), and the exit code every order of them must give.
type flagOrderCase struct {
	args func(f *flagOrderFixture) (pos, flags []string)
	code int
}

var flagOrderCases = map[string]flagOrderCase{
	"list": {func(f *flagOrderFixture) ([]string, []string) {
		return nil, []string{"--dir", f.dir, "--json", "--no-index"}
	}, exitOK},
	"show": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--leaf", f.ids[4], "--full"}
	}, exitOK},
	"tree": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--json"}
	}, exitOK},
	"stats": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--json"}
	}, exitOK},
	"export": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--format", "json", "--leaf", f.ids[3]}
	}, exitOK},
	"context": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--leaf", f.ids[2]}
	}, exitOK},
	"dump": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--fields", "leafId,branch"}
	}, exitOK},
	"tail": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"-n", "2", "--json"}
	}, exitOK},
	"fork": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--at", f.ids[5], "--json"}
	}, exitOK},
	"branch": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session, f.ids[4]}, []string{"--summary", "-tried the other way", "--json"}
	}, exitOK},
	"compact": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--keep-tokens", "10", "--dry-run", "--json"}
	}, exitOK},
	"label": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session, f.ids[1], "reading"}, []string{"--json", "--wait", "1s"}
	}, exitOK},
	"context-edit": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session, f.ids[1]}, []string{"--replace", "shorter", "--json", "--wait", "1s"}
	}, exitOK},
	"name": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session, "parser work"}, []string{"--json"}
	}, exitOK},
	"delete": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--json"}
	}, exitOK},
	"verify": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session, f.dir}, []string{"--json"}
	}, exitOK},
	"repair": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"-o", filepath.Join(f.root, "out.jsonl"), "--json"}
	}, exitOK},
	"migrate": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.dir, f.session}, []string{"--dry-run", "--json"}
	}, exitOK},
	"who": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{f.session}, []string{"--json"}
	}, exitOK},
	"import": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{"claude", filepath.Join(f.root, "claude")}, []string{"--dry-run", "--json", "--cwd", f.root}
	}, exitOK},
	"search": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{"parser"}, []string{"--store", filepath.Join(f.root, "agent", "sessions"), "--no-index", "--limit", "5", "--json"}
	}, exitOK},
	// sync reads its identity before it goes to the remote: a missing one
	// ends it after every flag and the verb were taken.
	"sync": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{"status"}, []string{"--remote", "s3://bucket/me", "--store", filepath.Join(f.root, "agent"),
			"--age-identity", filepath.Join(f.root, "no-identity"), "--json"}
	}, exitNotFound},
	"help": {func(f *flagOrderFixture) ([]string, []string) {
		return []string{"tail"}, nil
	}, exitOK},
	// serve checks its stores before it listens: a missing one ends it
	// after every flag was taken.
	"serve": {func(f *flagOrderFixture) ([]string, []string) {
		return nil, []string{"--addr", "127.0.0.1:0", "--store", filepath.Join(f.root, "nosuch"), "--index-dir", filepath.Join(f.root, "index")}
	}, exitNotFound},
	"demo": {func(f *flagOrderFixture) ([]string, []string) {
		return nil, []string{"--keep=false"}
	}, exitOK},
}

// Generated names and times in outputs, which differ from run to run.
var (
	flagOrderUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	flagOrderTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d[-.]\d{3}Z`)
	flagOrderID   = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	flagOrderDemo = regexp.MustCompile(`sessctl-demo-\d+`)
)

// flagOrderTemplate writes the files every run copies: a pi session
// and a Claude Code store.
func flagOrderTemplate(t *testing.T) (dir string, ids []string) {
	t.Helper()
	dir = t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(dir, "agent"))
	if err := os.MkdirAll(filepath.Join(dir, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, ids = mutSession(t, filepath.Join(dir, "proj"))
	claude := filepath.Join(dir, "claude", "projects", "-w", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(claude), 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a2","parentUuid":"u1","sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m","role":"assistant","model":"x","content":[{"type":"text","text":"hello"}]}}
`
	if err := os.WriteFile(claude, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

// runFlagOrder runs one command line in a fresh copy of the template and
// returns its exit code and outputs, with what differs between copies
// and runs replaced.
func runFlagOrder(t *testing.T, template string, ids []string, args func(f *flagOrderFixture) []string) (int, string, string) {
	t.Helper()
	root := t.TempDir()
	copyTree(t, template, root)
	isolate(t, root)
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(root, "agent"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	sessions, _ := filepath.Glob(filepath.Join(root, "agent", "sessions", "*", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("the template has sessions %q", sessions)
	}
	f := &flagOrderFixture{root: root, session: sessions[0], ids: ids, dir: filepath.Dir(sessions[0])}
	out, errOut, code := runCLI(t, args(f)...)
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	norm := func(s string) string {
		s = strings.ReplaceAll(s, root, "/ROOT")
		// In JSON a Windows path's backslashes are doubled.
		s = strings.ReplaceAll(s, strings.ReplaceAll(root, `\`, `\\`), "/ROOT")
		s = flagOrderUUID.ReplaceAllString(s, "UUID")
		s = flagOrderTime.ReplaceAllString(s, "TIME")
		s = flagOrderDemo.ReplaceAllString(s, "sessctl-demo-N")
		return flagOrderID.ReplaceAllStringFunc(s, func(id string) string {
			if known[id] {
				return id
			}
			return "NEWID"
		})
	}
	return code, norm(out), norm(errOut)
}

// TestFlagsAnywhere runs every command with its flags before its
// positional arguments, after the first of them and after all of them,
// and expects the same exit code, stdout and stderr each time.
func TestFlagsAnywhere(t *testing.T) {
	template, ids := flagOrderTemplate(t)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tc, ok := flagOrderCases[name]
			if !ok {
				t.Fatalf("no flag-order case for the command %q: add one to flagOrderCases", name)
			}
			orders := map[string]func(pos, flags []string) []string{
				"flags first": func(pos, flags []string) []string { return concat([]string{name}, flags, pos) },
				"flags after the first argument": func(pos, flags []string) []string {
					if len(pos) == 0 {
						return concat([]string{name}, flags)
					}
					return concat([]string{name, pos[0]}, flags, pos[1:])
				},
				"flags last": func(pos, flags []string) []string { return concat([]string{name}, pos, flags) },
			}
			type result struct {
				code        int
				out, errOut string
			}
			var first *result
			var firstOrder string
			all := []string{"flags first", "flags after the first argument", "flags last"}
			if pos, _ := tc.args(&flagOrderFixture{ids: ids}); len(pos) == 0 {
				all = all[:1] // the orders are one command line
			}
			for _, order := range all {
				code, out, errOut := runFlagOrder(t, template, ids, func(f *flagOrderFixture) []string {
					pos, flags := tc.args(f)
					return orders[order](pos, flags)
				})
				if code != tc.code {
					t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", order, code, tc.code, out, errOut)
				}
				r := &result{code, out, errOut}
				if first == nil {
					first, firstOrder = r, order
					continue
				}
				if *r != *first {
					t.Errorf("%s and %s differ:\n%s: exit %d\nstdout:\n%s\nstderr:\n%s\n%s: exit %d\nstdout:\n%s\nstderr:\n%s",
						firstOrder, order, firstOrder, first.code, first.out, first.errOut, order, r.code, r.out, r.errOut)
				}
			}
		})
	}
}

// TestHelpAndBadFlagAnywhere checks, for every command, that -h prints
// the command's help and an unknown flag is a usage mistake wherever
// they are on the command line.
func TestHelpAndBadFlagAnywhere(t *testing.T) {
	for name := range commands {
		helpOut, _, code := runCLI(t, "help", name)
		if code != exitOK || helpOut == "" {
			t.Errorf("help %s: exit %d", name, code)
			continue
		}
		for _, args := range [][]string{{name, "-h", "x"}, {name, "x", "-h"}, {name, "x", "y", "--help"}} {
			out, errOut, code := runCLI(t, args...)
			if code != exitOK || out != helpOut {
				t.Errorf("%q: exit %d, stdout:\n%s\nstderr:\n%s\nwant the help, as 'help %s' prints it", args, code, out, errOut, name)
			}
		}
		for _, args := range [][]string{{name, "--no-such-flag", "x"}, {name, "x", "--no-such-flag"}} {
			_, errOut, code := runCLI(t, args...)
			want := fmt.Sprintf("sessctl: %s: flag provided but not defined: -no-such-flag\nhint: run 'sessctl help %s'\n", name, name)
			if code != exitUsage || errOut != want {
				t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", args, code, errOut, exitUsage, want)
			}
		}
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestSyncVerbsFlagsAnywhere runs each sync verb with its flags before,
// around and after it. A missing identity file ends each run after the
// flags and the verb were taken, before any request.
func TestSyncVerbsFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "agent")
	for _, verb := range []string{"push", "pull", "status"} {
		remote := []string{"--remote", "s3://bucket/me"}
		rest := []string{"--store", store, "--age-identity", filepath.Join(dir, "no-identity"), "--json"}
		var first string
		for i, args := range [][]string{
			concat([]string{"sync"}, remote, rest, []string{verb}),
			concat([]string{"sync"}, remote, []string{verb}, rest),
			concat([]string{"sync", verb}, remote, rest),
		} {
			out, errOut, code := runCLI(t, args...)
			if code != exitNotFound || out != "" || !strings.Contains(errOut, "no-identity") {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d naming the identity file", args, code, out, errOut, exitNotFound)
			}
			if i == 0 {
				first = errOut
			} else if errOut != first {
				t.Errorf("%q: stderr %q, but %q with the flags first", args, errOut, first)
			}
		}
	}
}
