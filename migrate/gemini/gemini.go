package gemini

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	pimessage "github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Gemini CLI importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "gemini".
func (Source) Name() string { return "gemini" }

// Title returns "Gemini CLI".
func (Source) Title() string { return "Gemini CLI" }

// Locations returns $GEMINI_CLI_HOME/.gemini when set, else ~/.gemini.
func (Source) Locations(l migrate.Locator) []string {
	home := l.Home
	if h := l.Env("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	return []string{filepath.Join(home, ".gemini")}
}

// Detect reports whether path is a Gemini home, its tmp directory, a
// project or chats directory, or a chat file.
func (Source) Detect(path string) bool {
	l, err := layoutOf(nil, path)
	if err != nil {
		return false
	}
	if l.file != "" {
		return true
	}
	for _, d := range l.chatDirs {
		if len(chatFiles(nil, d)) > 0 {
			return true
		}
	}
	return false
}

// Open lists the chats under path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	l, err := layoutOf(opts.FS, path)
	if err != nil {
		return nil, err
	}
	return &store{l: l, opts: opts}, nil
}

type storeLayout struct {
	home     string   // the .gemini directory, when known
	chatDirs []string // <project>/chats directories
	file     string   // one chat file, when a file was given
}

func layoutOf(fsys vfs.FS, path string) (*storeLayout, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !strings.HasSuffix(abs, ".json") && !strings.HasSuffix(abs, ".jsonl") {
			return nil, fmt.Errorf("%s is not a Gemini CLI chat", abs)
		}
		chats := filepath.Dir(abs)
		if filepath.Base(chats) != "chats" && filepath.Base(filepath.Dir(chats)) == "chats" {
			chats = filepath.Dir(chats)
		}
		return &storeLayout{home: filepath.Dir(filepath.Dir(filepath.Dir(chats))), chatDirs: []string{chats}, file: abs}, nil
	}
	var tmp string
	switch {
	case srcfs.IsDir(fsys, filepath.Join(abs, "tmp")):
		tmp = filepath.Join(abs, "tmp")
	case filepath.Base(abs) == "tmp":
		tmp = abs
	case filepath.Base(abs) == "chats":
		return &storeLayout{home: filepath.Dir(filepath.Dir(filepath.Dir(abs))), chatDirs: []string{abs}}, nil
	case srcfs.IsDir(fsys, filepath.Join(abs, "chats")):
		return &storeLayout{home: filepath.Dir(filepath.Dir(abs)), chatDirs: []string{filepath.Join(abs, "chats")}}, nil
	default:
		return nil, fmt.Errorf("%s holds no Gemini CLI chats (no tmp or chats directory)", abs)
	}
	ents, err := srcfs.ReadDir(fsys, tmp)
	if err != nil {
		return nil, err
	}
	l := &storeLayout{home: filepath.Dir(tmp)}
	for _, e := range ents {
		if c := filepath.Join(tmp, e.Name(), "chats"); e.IsDir() && srcfs.IsDir(fsys, c) {
			l.chatDirs = append(l.chatDirs, c)
		}
	}
	return l, nil
}

type store struct {
	l        *storeLayout
	opts     migrate.ImportOptions
	registry map[string]string // project dir name -> project root, from projects.json
	regRead  bool
}

func (s *store) Close() error { return nil }

// meta is a chat's metadata.
type meta struct {
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	StartTime   json.RawMessage `json:"startTime"`
	Summary     string          `json:"summary"`
	Kind        string          `json:"kind"`
	Directories []string        `json:"directories"`
}

// readMeta reads a chat's metadata: the first line of a JSONL chat, the
// document of a JSON one.
func readMeta(fsys vfs.FS, path string) (meta, error) {
	var m meta
	if strings.HasSuffix(path, ".json") {
		data, err := srcfs.ReadFile(fsys, path)
		if err != nil {
			return m, err
		}
		return m, json.Unmarshal(data, &m)
	}
	fh, err := srcfs.Open(fsys, path)
	if err != nil {
		return m, err
	}
	defer fh.Close()
	var derr error
	err = migrate.EachLine(fh, 0, func(n int, line []byte, err error) bool {
		if derr = err; err == nil {
			derr = migrate.DecodeLine(line, &m)
		}
		return false
	})
	if err != nil {
		return m, err
	}
	return m, derr
}

func chatFiles(fsys vfs.FS, dir string) []string {
	var out []string
	for _, pat := range []string{"session-*.json", "session-*.jsonl"} {
		files := srcfs.Glob(fsys, filepath.Join(dir, pat))
		out = append(out, files...)
	}
	sort.Strings(out)
	return out
}

// Sessions lists each chat once (a .jsonl written when an old .json chat
// was resumed wins over it), each followed by its subagent chats.
func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, dir := range s.l.chatDirs {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			type chat struct {
				id, path string
			}
			var chats []chat
			byID := map[string]int{}
			for _, f := range chatFiles(s.opts.FS, dir) {
				if s.l.file != "" && f != s.l.file {
					continue
				}
				m, err := readMeta(s.opts.FS, f)
				if err != nil || m.SessionID == "" {
					if err == nil {
						err = fmt.Errorf("no sessionId")
					}
					if !yield(migrate.Ref{}, &migrate.Damage{Path: f, Line: lineOf(f), Err: err}) {
						return
					}
					continue
				}
				if i, ok := byID[m.SessionID]; ok {
					if strings.HasSuffix(f, ".jsonl") {
						chats[i].path = f
					}
					continue
				}
				byID[m.SessionID] = len(chats)
				chats = append(chats, chat{m.SessionID, f})
			}
			for _, c := range chats {
				if !yield(migrate.Ref{ID: c.id, Path: c.path, Key: c.path}, nil) {
					return
				}
				subs := srcfs.Glob(s.opts.FS, filepath.Join(dir, c.id, "*.jsonl"))
				sort.Strings(subs)
				for _, f := range subs {
					if !yield(migrate.Ref{ID: strings.TrimSuffix(filepath.Base(f), ".jsonl"), Path: f, Key: f}, nil) {
						return
					}
				}
			}
			if s.l.file != "" && len(chats) == 0 && filepath.Dir(s.l.file) != dir {
				// A subagent chat given on its own.
				if !yield(migrate.Ref{ID: strings.TrimSuffix(filepath.Base(s.l.file), ".jsonl"), Path: s.l.file, Key: s.l.file}, nil) {
					return
				}
			}
		}
	}
}

// lineOf is 1 for a JSONL file (its metadata line) and 0 for a JSON one.
func lineOf(path string) int {
	if strings.HasSuffix(path, ".jsonl") {
		return 1
	}
	return 0
}

// projectRoot returns the project root of a project directory.
func (s *store) projectRoot(projDir string) string {
	if b, err := srcfs.ReadFile(s.opts.FS, filepath.Join(projDir, ".project_root")); err == nil {
		if p := strings.TrimSpace(string(b)); p != "" {
			return p
		}
	}
	if !s.regRead {
		s.regRead = true
		s.registry = map[string]string{}
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if b, err := srcfs.ReadFile(s.opts.FS, filepath.Join(s.l.home, "projects.json")); err == nil && json.Unmarshal(b, &reg) == nil {
			for path, slug := range reg.Projects {
				s.registry[slug] = path
			}
		}
	}
	return s.registry[filepath.Base(projDir)]
}

// hashMatch returns the ancestor of a path named in the chat whose SHA-256
// is the project hash.
func hashMatch(hash string, paths []string) string {
	if hash == "" {
		return ""
	}
	tried := map[string]bool{}
	for _, p := range paths {
		for cand := p; cand != ""; {
			if !tried[cand] {
				tried[cand] = true
				h := sha256.Sum256([]byte(cand))
				if hex.EncodeToString(h[:]) == hash {
					return cand
				}
			}
			i := strings.LastIndexAny(cand, `/\`)
			if i <= 0 {
				break
			}
			cand = cand[:i]
		}
	}
	return ""
}

// message is a Gemini message record.
type message struct {
	ID        string          `json:"id"`
	Timestamp json.RawMessage `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []toolCall      `json:"toolCalls"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	Tokens *struct {
		Input    float64 `json:"input"`
		Output   float64 `json:"output"`
		Cached   float64 `json:"cached"`
		Thoughts float64 `json:"thoughts"`
		Total    float64 `json:"total"`
	} `json:"tokens"`
	Model string `json:"model"`
}

type toolCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Args          json.RawMessage `json:"args"`
	Result        json.RawMessage `json:"result"`
	Status        string          `json:"status"`
	ResultDisplay json.RawMessage `json:"resultDisplay"`
}

type part struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// parts decodes content: a string, one part, or a list of parts.
func parts(raw json.RawMessage) []part {
	raw = bytes.TrimSpace(raw)
	switch jsonl.KindOf(raw) {
	case jsonl.KindString:
		s, _ := jsonl.String(raw)
		return []part{{Text: &s}}
	case jsonl.KindObject:
		var p part
		_ = json.Unmarshal(raw, &p)
		return []part{p}
	case jsonl.KindArray:
		var out []part
		_ = jsonl.Elements(raw, func(v []byte) bool {
			if jsonl.KindOf(v) == jsonl.KindString {
				s, _ := jsonl.String(v)
				out = append(out, part{Text: &s})
				return true
			}
			var p part
			_ = json.Unmarshal(v, &p)
			out = append(out, p)
			return true
		})
		return out
	}
	return nil
}

// record is one parsed message record with its place in the chat.
type record struct {
	m      message
	parent string // id of the message it follows, "" for the first
}

// Convert reads the chat (readDocument or readLines), makes the
// session's meta (sessionMeta) and converts its messages.
func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	conv := &migrate.Conversion{}
	ch := &chatRead{recs: map[string]*record{}, order: []string{}}
	var err error
	if strings.HasSuffix(ref.Key, ".json") {
		err = s.readDocument(ref, ch, conv)
	} else {
		err = s.readLines(ref, ch, conv)
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	md, order, recs, chain := ch.md, ch.order, ch.recs, ch.chain
	sourceID := md.SessionID
	if sourceID == "" {
		sourceID = ref.ID
	}
	m := s.sessionMeta(ref, ch)

	c := &converter{b: migrate.NewBuilder("gemini", sourceID), last: map[string]*migrate.Node{}, answered: map[string]bool{}, clock: m.Start}
	for _, id := range order {
		c.message(recs[id], recs)
	}
	c.flush()
	if len(chain) > 0 {
		if n := c.last[chain[len(chain)-1]]; n != nil {
			c.b.SetLeaf(n)
		}
	}
	if c.b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Path, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if md.Summary != "" {
		c.b.SetName(md.Summary)
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

// chatRead is a chat as read: its metadata, its message records in the
// order first written, and the chain of messages the chat went on with.
type chatRead struct {
	md    meta
	order []string
	recs  map[string]*record
	chain []string
}

// add adds message m to the chat, after the last message of the chain; a
// message already read is replaced in its place.
func (ch *chatRead) add(m message) {
	recs := ch.recs
	if r, ok := recs[m.ID]; ok {
		r.m = m
		return
	}
	parent := ""
	if len(ch.chain) > 0 {
		parent = ch.chain[len(ch.chain)-1]
	}
	recs[m.ID] = &record{m: m, parent: parent}
	ch.order = append(ch.order, m.ID)
	ch.chain = append(ch.chain, m.ID)
}

// readDocument reads a chat that is one JSON document into ch; the
// messages it cannot read go to conv's damage.
func (s *store) readDocument(ref migrate.Ref, ch *chatRead, conv *migrate.Conversion) error {
	data, err := srcfs.ReadFileTracked(s.opts.FS, ref.Key, s.opts.Progress)
	if err != nil {
		return err
	}
	var doc struct {
		meta
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return &migrate.Damage{Path: ref.Key, Line: jsonErrorLine(data, err), Err: err}
	}
	ch.md = doc.meta
	for i, raw := range doc.Messages {
		var m message
		if err := migrate.DecodeJSON(raw, &m); err != nil || m.ID == "" {
			if err == nil {
				err = fmt.Errorf("message without id")
			}
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Pos: fmt.Sprintf("message %d", i+1), Err: err})
			continue
		}
		ch.add(m)
	}
	return nil
}

// readLines reads a JSONL chat into ch: messages, rewinds, metadata and
// its updates; the lines it cannot read go to conv's damage.
func (s *store) readLines(ref migrate.Ref, ch *chatRead, conv *migrate.Conversion) error {
	fh, err := srcfs.OpenTracked(s.opts.FS, ref.Key, s.opts.Progress)
	if err != nil {
		return err
	}
	err = migrate.EachLine(fh, s.opts.MaxLine, func(n int, line []byte, err error) bool {
		var probe struct {
			ID       *string          `json:"id"`
			Set      *json.RawMessage `json:"$set"`
			RewindTo *string          `json:"$rewindTo"`
			meta
		}
		if err == nil {
			err = migrate.DecodeLine(line, &probe)
		}
		if err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Line: n, Err: err})
			return true
		}
		switch {
		case probe.RewindTo != nil:
			for i, id := range ch.chain {
				if id == *probe.RewindTo {
					ch.chain = ch.chain[:i]
					break
				}
			}
		case probe.Set != nil:
			var set meta
			if json.Unmarshal(*probe.Set, &set) == nil && set.Summary != "" {
				ch.md.Summary = set.Summary
			}
		case probe.ID != nil:
			var m message
			if err := json.Unmarshal(line, &m); err != nil {
				conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Line: n, Err: err})
				return true
			}
			ch.add(m)
		case probe.SessionID != "":
			summary := ch.md.Summary
			ch.md = probe.meta
			if ch.md.Summary == "" {
				ch.md.Summary = summary
			}
		}
		return true
	})
	fh.Close()
	if err != nil {
		return &migrate.Damage{Path: ref.Key, Err: err}
	}
	return nil
}

// sessionMeta makes the meta of the session chat ch read: its parent
// (for a chat in chats/<parent id>/), its start and its cwd (the project
// root, the chat's first directory, or the one whose hash the chat names
// among the paths its tool calls name).
func (s *store) sessionMeta(ref migrate.Ref, ch *chatRead) migrate.Meta {
	md, order, recs := ch.md, ch.order, ch.recs
	m := migrate.Meta{SourcePath: ref.Key}
	chats := filepath.Dir(ref.Key)
	if filepath.Base(chats) != "chats" {
		// chats/<parent id>/<id>.jsonl
		m.ParentSourceID = filepath.Base(chats)
		chats = filepath.Dir(chats)
	}
	m.Start, _ = migrate.ParseTime(md.StartTime)
	if m.Start.IsZero() {
		for _, id := range order {
			if t, ok := migrate.ParseTime(recs[id].m.Timestamp); ok {
				m.Start = t
				break
			}
		}
	}
	if m.Start.IsZero() {
		m.Start = time.UnixMilli(0).UTC()
	}
	if root := s.projectRoot(filepath.Dir(chats)); root != "" {
		m.Cwd, m.CwdKnown = root, true
	} else if len(md.Directories) > 0 && md.Directories[0] != "" {
		m.Cwd, m.CwdKnown = md.Directories[0], true
	} else {
		var paths []string
		for _, id := range order {
			for _, tc := range recs[id].m.ToolCalls {
				paths = append(paths, argPaths(tc.Args)...)
			}
		}
		if c := hashMatch(md.ProjectHash, paths); c != "" {
			m.Cwd, m.CwdKnown = c, true
		} else {
			m.Cwd = s.opts.Cwd
		}
	}
	return m
}

// jsonErrorLine returns the line of a JSON syntax error.
func jsonErrorLine(data []byte, err error) int {
	if se, ok := err.(*json.SyntaxError); ok && se.Offset <= int64(len(data)) {
		return 1 + bytes.Count(data[:se.Offset], []byte{'\n'})
	}
	return 0
}

// argPaths returns the absolute paths among a tool call's arguments.
func argPaths(args json.RawMessage) []string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok && (strings.HasPrefix(s, "/") || len(s) > 2 && s[1] == ':' && (s[2] == '\\' || s[2] == '/')) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

type pending struct {
	id, name, status string
	display          json.RawMessage
}

type converter struct {
	b        *migrate.Builder
	last     map[string]*migrate.Node // message id -> its last node
	tip      *migrate.Node
	answered map[string]bool
	open     []pending     // tool calls still without a result
	openTip  *migrate.Node // where their results go
	openID   string        // the message that made them
	clock    time.Time
}

// flush answers the tool calls that got no result with one saying so,
// right after their message (and the results it did get).
func (c *converter) flush() {
	if len(c.open) == 0 {
		return
	}
	t := c.openTip
	for _, p := range c.open {
		text := "(no result recorded; status " + p.status + ")"
		if s, ok := jsonl.String(p.display); ok && s != "" {
			text = s
		}
		isErr := p.status != "success"
		t = c.b.Message(c.openID+"/result/"+p.id, t, c.clock, migrate.ToolResultMessage(p.id, p.name, migrate.TextContent(text), nil, isErr, migrate.Millis(c.clock)))
		c.answered[p.id] = true
	}
	if c.tip == c.openTip {
		c.tip = t
	}
	c.last[c.openID] = t
	c.open, c.openTip = nil, nil
}

func (c *converter) message(r *record, recs map[string]*record) {
	m := r.m
	if t, ok := migrate.ParseTime(m.Timestamp); ok {
		c.clock = t
	}
	c.tip = nil
	if r.parent != "" {
		c.tip = c.last[r.parent]
	}
	ms := migrate.Millis(c.clock)
	switch m.Type {
	case "user":
		var blocks [][]byte
		var text *string
		for _, p := range parts(m.Content) {
			switch {
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				if c.answered[fr.ID] {
					continue
				}
				content, isErr := response(fr.Response)
				n := c.b.Message(m.ID+"/result/"+fr.ID, c.tip, c.clock, migrate.ToolResultMessage(fr.ID, fr.Name, content, nil, isErr, ms))
				if c.tip == c.openTip {
					c.openTip = n
				}
				c.tip = n
				c.answered[fr.ID] = true
				c.dropOpen(fr.ID)
			case p.Text != nil:
				if text == nil {
					text = p.Text
				}
				blocks = append(blocks, migrate.TextBlock(*p.Text))
			case p.InlineData != nil:
				blocks = append(blocks, migrate.ImageBlock(p.InlineData.Data, p.InlineData.MimeType))
			case p.FileData != nil:
				blocks = append(blocks, migrate.TextBlock("[file: "+p.FileData.FileURI+"]"))
			}
		}
		if len(blocks) > 0 {
			c.flush()
			var content []byte
			if s, ok := jsonl.String(bytes.TrimSpace(m.Content)); ok {
				content = jsonl.AppendString(nil, s)
			} else {
				content = migrate.Array(blocks)
			}
			c.tip = c.b.Message(m.ID, c.tip, c.clock, migrate.UserMessage(content, ms))
		}
	case "gemini":
		c.flush()
		a := migrate.Assistant{API: "google-generative-ai", Provider: "google", Model: m.Model, Timestamp: ms}
		for _, t := range m.Thoughts {
			text := t.Description
			if t.Subject != "" {
				text = "**" + t.Subject + "**\n\n" + t.Description
			}
			a.Content = append(a.Content, migrate.ThinkingBlock(text, "", false))
		}
		calls := map[string]bool{}
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
		var extra []toolCall
		for _, p := range parts(m.Content) {
			switch {
			case p.Text != nil && p.Thought:
				a.Content = append(a.Content, migrate.ThinkingBlock(*p.Text, "", false))
			case p.Text != nil && *p.Text != "":
				a.Content = append(a.Content, migrate.TextBlock(*p.Text))
			case p.FunctionCall != nil && !calls[p.FunctionCall.ID]:
				extra = append(extra, toolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args, Status: "unknown"})
			}
		}
		all := append(append([]toolCall(nil), m.ToolCalls...), extra...)
		for _, tc := range all {
			a.Content = append(a.Content, migrate.ToolCallBlock(tc.ID, tc.Name, migrate.ObjectArgs(tc.Args)))
		}
		if t := m.Tokens; t != nil {
			a.Usage = pimessage.Usage{Input: migrate.Tokens(t.Input - t.Cached), CacheRead: migrate.Tokens(t.Cached), Output: migrate.Tokens(t.Output + t.Thoughts), TotalTokens: migrate.Tokens(t.Total)}
		}
		c.tip = c.b.Message(m.ID, c.tip, c.clock, a.JSON())
		for _, tc := range all {
			if len(bytes.TrimSpace(tc.Result)) == 0 || string(bytes.TrimSpace(tc.Result)) == "null" {
				c.open = append(c.open, pending{id: tc.ID, name: tc.Name, status: tc.Status, display: tc.ResultDisplay})
				continue
			}
			content, isErr := results(tc.Result)
			if tc.Status == "error" || tc.Status == "cancelled" {
				isErr = true
			}
			c.tip = c.b.Message(m.ID+"/result/"+tc.ID, c.tip, c.clock, migrate.ToolResultMessage(tc.ID, tc.Name, content, nil, isErr, ms))
			c.answered[tc.ID] = true
		}
		if len(c.open) > 0 {
			c.openTip, c.openID = c.tip, m.ID
		}
	default:
		c.flush()
		text := ""
		for _, p := range parts(m.Content) {
			if p.Text != nil {
				text += *p.Text
			}
		}
		data := jsonl.NewObject(len(text)+32).String("content", text).Bytes()
		c.tip = c.b.Custom(m.ID, c.tip, c.clock, "gemini-"+m.Type, data)
	}
	if c.tip != nil {
		c.last[m.ID] = c.tip
	}
}

func (c *converter) dropOpen(id string) {
	for i, p := range c.open {
		if p.id == id {
			c.open = append(c.open[:i], c.open[i+1:]...)
			return
		}
	}
}

// results converts a tool call's recorded result (a list of parts with
// functionResponse) to content blocks.
func results(raw json.RawMessage) ([]byte, bool) {
	var blocks [][]byte
	failed := false
	for _, p := range parts(raw) {
		switch {
		case p.FunctionResponse != nil:
			content, isErr := response(p.FunctionResponse.Response)
			failed = failed || isErr
			_ = jsonl.Elements(content, func(b []byte) bool {
				blocks = append(blocks, append([]byte(nil), b...))
				return true
			})
		case p.Text != nil:
			blocks = append(blocks, migrate.TextBlock(*p.Text))
		case p.InlineData != nil:
			blocks = append(blocks, migrate.ImageBlock(p.InlineData.Data, p.InlineData.MimeType))
		}
	}
	return migrate.Array(blocks), failed
}

// response converts a FunctionResponse's response object: its output and
// its error as text blocks (an error makes it a failure), or its JSON.
func response(raw json.RawMessage) ([]byte, bool) {
	var r struct {
		Output *string          `json:"output"`
		Error  *json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(raw, &r)
	var blocks [][]byte
	if r.Output != nil {
		blocks = append(blocks, migrate.TextBlock(*r.Output))
	}
	if r.Error != nil {
		blocks = append(blocks, migrate.TextBlock(migrate.JSONText(*r.Error)))
	}
	if len(blocks) == 0 {
		return migrate.TextContent(migrate.JSONText(raw)), false
	}
	return migrate.Array(blocks), r.Error != nil
}
