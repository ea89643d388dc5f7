package claude

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Claude Code importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "claude".
func (Source) Name() string { return "claude" }

// Title returns "Claude Code".
func (Source) Title() string { return "Claude Code" }

// Locations returns CLAUDE_CONFIG_DIR when set, else ~/.claude.
func (Source) Locations(l migrate.Locator) []string {
	if d := l.Env("CLAUDE_CONFIG_DIR"); d != "" {
		return []string{d}
	}
	return []string{filepath.Join(l.Home, ".claude")}
}

// Detect reports whether path is a Claude Code home (with projects/), its
// projects directory, one project directory, or one session file.
func (Source) Detect(path string) bool {
	_, err := layoutOf(nil, path)
	return err == nil
}

// Open opens the store at path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	l, err := layoutOf(opts.FS, path)
	if err != nil {
		return nil, err
	}
	return &store{l: l, opts: opts, projects: make(map[string]*project)}, nil
}

// storeLayout is where the parts of a store are.
type storeLayout struct {
	projectDirs []string // directories holding session files
	file        string   // one session file, when a file was given
	history     string   // history.jsonl, when there is one
	allProjects bool     // projectDirs are every project of the store
}

// layoutOf works out what path is.
func layoutOf(fsys vfs.FS, path string) (*storeLayout, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	switch {
	case srcfs.IsFile(fsys, abs):
		if !strings.HasSuffix(abs, ".jsonl") {
			return nil, fmt.Errorf("%s is not a Claude Code session file", abs)
		}
		dir := filepath.Dir(abs)
		if filepath.Base(dir) == "subagents" {
			dir = filepath.Dir(filepath.Dir(dir))
		}
		return &storeLayout{file: abs, projectDirs: []string{dir}, history: historyFor(fsys, filepath.Dir(filepath.Dir(dir)))}, nil
	case srcfs.IsDir(fsys, filepath.Join(abs, "projects")):
		dirs, err := subdirs(fsys, filepath.Join(abs, "projects"))
		if err != nil {
			return nil, err
		}
		return &storeLayout{projectDirs: dirs, history: historyFor(fsys, abs), allProjects: true}, nil
	case srcfs.IsDir(fsys, abs) && filepath.Base(abs) == "projects":
		dirs, err := subdirs(fsys, abs)
		if err != nil {
			return nil, err
		}
		return &storeLayout{projectDirs: dirs, history: historyFor(fsys, filepath.Dir(abs)), allProjects: true}, nil
	case srcfs.IsDir(fsys, abs) && hasJSONL(fsys, abs):
		return &storeLayout{projectDirs: []string{abs}, history: historyFor(fsys, filepath.Dir(filepath.Dir(abs)))}, nil
	case srcfs.IsDir(fsys, abs):
		return nil, fmt.Errorf("%s holds no Claude Code sessions (no projects directory, no .jsonl files)", abs)
	}
	return nil, fmt.Errorf("%s: %w", abs, os.ErrNotExist)
}

func historyFor(fsys vfs.FS, home string) string {
	p := filepath.Join(home, "history.jsonl")
	if srcfs.IsFile(fsys, p) {
		return p
	}
	return ""
}

func subdirs(fsys vfs.FS, dir string) ([]string, error) {
	ents, err := srcfs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func hasJSONL(fsys vfs.FS, dir string) bool {
	ents, err := srcfs.ReadDir(fsys, dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			return true
		}
	}
	return false
}

type store struct {
	l    *storeLayout
	opts migrate.ImportOptions

	mu       sync.Mutex
	projects map[string]*project
	history  map[string]string // encoded project dir name -> cwd
	histRead bool

	histSessions  map[string]*historySession // prompt-only sessions by id (History)
	histNoSession int                        // history prompts naming no session
}

// project is what the store learns about one project directory.
type project struct {
	dir       string
	mains     []string            // session files, sorted
	agents    map[string][]string // main session id -> its subagent files
	orphans   []string            // subagent files whose main file is missing
	summaries map[string]summary  // leafUuid -> title
	sumRead   bool
}

type summary struct {
	text string
}

func (s *store) Close() error { return nil }

// project lists one project directory (once).
func (s *store) project(dir string) (*project, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.projects[dir]; ok {
		return p, nil
	}
	p := &project{dir: dir, agents: make(map[string][]string)}
	s.projects[dir] = p
	var errs []error
	ents, err := srcfs.ReadDir(s.opts.FS, dir)
	if err != nil {
		return p, []error{&migrate.Damage{Path: dir, Err: err}}
	}
	mains := make(map[string]bool)
	var flat []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.IsDir() && strings.HasSuffix(name, ".jsonl") && strings.HasPrefix(name, "agent-"):
			flat = append(flat, filepath.Join(dir, name))
		case !e.IsDir() && strings.HasSuffix(name, ".jsonl"):
			p.mains = append(p.mains, filepath.Join(dir, name))
			mains[strings.TrimSuffix(name, ".jsonl")] = true
		}
	}
	for _, f := range flat {
		sid := firstSessionID(s.opts.FS, f)
		if sid != "" && mains[sid] {
			p.agents[sid] = append(p.agents[sid], f)
		} else {
			p.orphans = append(p.orphans, f)
		}
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name(), "subagents")
		files := srcfs.Glob(s.opts.FS, filepath.Join(sub, "agent-*.jsonl"))
		if len(files) == 0 {
			continue
		}
		sort.Strings(files)
		if mains[e.Name()] {
			p.agents[e.Name()] = append(p.agents[e.Name()], files...)
		} else {
			p.orphans = append(p.orphans, files...)
		}
	}
	sort.Strings(p.mains)
	sort.Strings(p.orphans)
	return p, errs
}

// Sessions lists every session file and every orphan subagent file;
// subagents with a parent file come with their parent.
func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, dir := range s.l.projectDirs {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			p, errs := s.project(dir)
			for _, err := range errs {
				if !yield(migrate.Ref{}, err) {
					return
				}
			}
			for _, f := range p.mains {
				if s.l.file != "" && f != s.l.file {
					continue
				}
				id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
				if !yield(migrate.Ref{ID: id, Path: f, Key: "main\x00" + dir + "\x00" + f}, nil) {
					return
				}
			}
			for _, f := range p.orphans {
				if s.l.file != "" && f != s.l.file {
					continue
				}
				id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
				if !yield(migrate.Ref{ID: id, Path: f, Key: "orphan\x00" + dir + "\x00" + f}, nil) {
					return
				}
			}
		}
		if !s.opts.History {
			return
		}
		refs, errs := s.historyRefs()
		for _, err := range errs {
			if !yield(migrate.Ref{}, err) {
				return
			}
		}
		for _, ref := range refs {
			if !yield(ref, nil) {
				return
			}
		}
	}
}

// Convert converts a session file with its subagents, or an orphan
// subagent file.
func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	kind, rest, _ := strings.Cut(ref.Key, "\x00")
	if kind == "history" || kind == historyNoSession {
		return s.convertHistory(ctx, ref)
	}
	dir, file, _ := strings.Cut(rest, "\x00")
	if file == "" {
		return nil, fmt.Errorf("claude: unknown session reference %q", ref.ID)
	}
	p, _ := s.project(dir)
	c := &converter{store: s, project: p, conv: &migrate.Conversion{}}
	switch kind {
	case "main":
		if err := c.main(ctx, file); err != nil {
			return nil, err
		}
	case "orphan":
		if err := c.orphan(file); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("claude: unknown session reference %q", ref.ID)
	}
	return c.conv, nil
}

// summaries reads the title records of every session file of the project.
func (s *store) summaries(p *project) map[string]summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.sumRead {
		return p.summaries
	}
	p.sumRead = true
	p.summaries = make(map[string]summary)
	for _, f := range p.mains {
		fh, err := srcfs.Open(s.opts.FS, f)
		if err != nil {
			continue
		}
		_ = migrate.EachLine(fh, 0, func(_ int, line []byte, err error) bool {
			if err != nil || !strings.Contains(string(line), `"summary"`) {
				return true
			}
			var r struct {
				Type     string `json:"type"`
				Summary  string `json:"summary"`
				LeafUUID string `json:"leafUuid"`
			}
			if migrate.DecodeLine(line, &r) == nil && r.Type == "summary" && r.LeafUUID != "" {
				p.summaries[r.LeafUUID] = summary{text: r.Summary}
			}
			return true
		})
		fh.Close()
	}
	return p.summaries
}

// historyCwd returns the working directory history.jsonl records for a
// project directory name.
func (s *store) historyCwd(dirName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.histRead {
		s.histRead = true
		s.history = make(map[string]string)
		if s.l.history != "" {
			if fh, err := srcfs.Open(s.opts.FS, s.l.history); err == nil {
				_ = migrate.EachLine(fh, 0, func(_ int, line []byte, err error) bool {
					var r struct {
						Project string `json:"project"`
					}
					if err == nil && migrate.DecodeLine(line, &r) == nil && r.Project != "" {
						s.history[EncodeCwd(r.Project)] = r.Project
					}
					return true
				})
				fh.Close()
			}
		}
	}
	return s.history[dirName]
}

// EncodeCwd returns the project directory name Claude Code uses for a
// working directory: every UTF-16 code unit that is not an ASCII letter
// or digit becomes '-'.
func EncodeCwd(cwd string) string {
	out := make([]byte, 0, len(cwd))
	for _, r := range cwd {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			out = append(out, byte(r))
		case r > 0xFFFF: // two UTF-16 code units in JavaScript's replace
			out = append(out, '-', '-')
		default:
			out = append(out, '-')
		}
	}
	return string(out)
}

// firstSessionID returns the sessionId of the first record of a file that
// has one.
func firstSessionID(fsys vfs.FS, path string) string {
	fh, err := srcfs.Open(fsys, path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	var sid string
	_ = migrate.EachLine(fh, 0, func(_ int, line []byte, err error) bool {
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if err == nil && migrate.DecodeLine(line, &r) == nil && r.SessionID != "" {
			sid = r.SessionID
			return false
		}
		return true
	})
	return sid
}
