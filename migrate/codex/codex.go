package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Codex importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "codex".
func (Source) Name() string { return "codex" }

// Title returns "Codex".
func (Source) Title() string { return "Codex" }

// Locations returns CODEX_HOME when set, else ~/.codex.
func (Source) Locations(l migrate.Locator) []string {
	if d := l.Env("CODEX_HOME"); d != "" {
		return []string{d}
	}
	return []string{filepath.Join(l.Home, ".codex")}
}

// Detect reports whether path is a rollout file or a directory holding
// rollouts (the Codex home, its sessions directory, or below).
func (Source) Detect(path string) bool {
	files, err := rollouts(path, true)
	return err == nil && len(files) > 0
}

// Open lists the rollouts under path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Store, error) {
	files, err := rollouts(path, false)
	if err != nil {
		return nil, err
	}
	return &store{files: files, opts: opts}, nil
}

// rollouts returns the rollout files at or under path, oldest first (their
// names start with the time), so parents come before their subagents.
func rollouts(path string, first bool) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !strings.HasSuffix(abs, ".jsonl") {
			return nil, fmt.Errorf("%s is not a Codex rollout", abs)
		}
		return []string{abs}, nil
	}
	roots := []string{abs}
	if s := filepath.Join(abs, "sessions"); srcfs.IsDir(s) {
		roots = []string{s}
		if a := filepath.Join(abs, "archived_sessions"); srcfs.IsDir(a) {
			roots = append(roots, a)
		}
	}
	var files []string
	for _, root := range roots {
		found, err := srcfs.Find(root, 0, first, func(d fs.DirEntry) bool {
			return strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl")
		})
		if err != nil {
			return nil, err
		}
		if files = append(files, found...); first && len(files) > 0 {
			return files, nil
		}
	}
	sort.Slice(files, func(i, j int) bool {
		bi, bj := filepath.Base(files[i]), filepath.Base(files[j])
		if bi != bj {
			return bi < bj
		}
		return files[i] < files[j]
	})
	return files, nil
}

type store struct {
	files []string
	opts  migrate.ImportOptions
}

func (s *store) Close() error { return nil }

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// fileID returns the session id in a rollout's name.
func fileID(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if m := uuidRe.FindString(base); m != "" {
		return strings.ToLower(m)
	}
	return base
}

func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, f := range s.files {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			if !yield(migrate.Ref{ID: fileID(f), Path: f, Key: f}, nil) {
				return
			}
		}
	}
}

// line is one rollout line, in either form.
type line struct {
	Timestamp  json.RawMessage `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType string          `json:"record_type"`
	ID         *string         `json:"id"`
}

// item is a response item (and, loosely, other payloads).
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Encrypted string          `json:"encrypted_content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	ID        json.RawMessage `json:"id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Status    string          `json:"status"`
	Message   json.RawMessage `json:"message"`
	Info      *struct {
		Last *struct {
			Input     float64 `json:"input_tokens"`
			Cached    float64 `json:"cached_input_tokens"`
			Output    float64 `json:"output_tokens"`
			Total     float64 `json:"total_tokens"`
			Reasoning float64 `json:"reasoning_output_tokens"`
		} `json:"last_token_usage"`
	} `json:"info"`

	// session_meta and turn_context
	Cwd           string          `json:"cwd"`
	CLIVersion    string          `json:"cli_version"`
	ModelProvider string          `json:"model_provider"`
	Model         string          `json:"model"`
	Effort        string          `json:"effort"`
	Timestamp     json.RawMessage `json:"timestamp"`
	Source        json.RawMessage `json:"source"`
}

type part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	fh, err := srcfs.OpenTracked(ref.Key, s.opts.Progress)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	conv := &migrate.Conversion{}
	type entry struct {
		n    int
		t    time.Time
		hasT bool
		kind string // envelope type, or "item" for a bare response item
		it   item
		raw  []byte
	}
	var entries []entry
	err = migrate.EachLine(fh, func(n int, b []byte) bool {
		if ctx.Err() != nil {
			return false
		}
		var l line
		if err := migrate.DecodeLine(b, &l); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Line: n, Err: err})
			return true
		}
		e := entry{n: n}
		e.t, e.hasT = migrate.ParseTime(l.Timestamp)
		switch {
		case l.Payload != nil && l.Type != "":
			e.kind, e.raw = l.Type, l.Payload
		case l.RecordType != "":
			return true
		case l.Type == "" && l.ID != nil && len(entries) == 0:
			e.kind, e.raw = "legacy_meta", b
		case l.Type != "":
			e.kind, e.raw, e.hasT = "response_item", b, false
		default:
			return true
		}
		if err := json.Unmarshal(e.raw, &e.it); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Line: n, Err: err})
			return true
		}
		entries = append(entries, e)
		return true
	})
	if err != nil {
		return nil, &migrate.Damage{Path: ref.Key, Err: err}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// Session facts first: they name the session.
	m := migrate.Meta{SourcePath: ref.Key}
	sourceID := fileID(ref.Key)
	provider := ""
	haveUser, haveAsst := false, false
	for _, e := range entries {
		switch e.kind {
		case "session_meta", "legacy_meta":
			if id := jsonString(e.it.ID); id != "" {
				sourceID = id
			}
			if t, ok := migrate.ParseTime(e.it.Timestamp); ok {
				m.Start = t
			} else if e.hasT {
				m.Start = e.t
			}
			if e.it.Cwd != "" && m.Cwd == "" {
				m.Cwd, m.CwdKnown = e.it.Cwd, true
			}
			if e.it.CLIVersion != "" {
				m.SourceVersion = e.it.CLIVersion
			}
			if e.it.ModelProvider != "" {
				provider = e.it.ModelProvider
			}
			if p := findString(e.it.Source, "parent_thread_id"); p != "" {
				m.ParentSourceID = p
			}
		case "turn_context":
			if e.it.Cwd != "" && m.Cwd == "" {
				m.Cwd, m.CwdKnown = e.it.Cwd, true
			}
		case "response_item":
			if e.it.Type == "message" {
				switch e.it.Role {
				case "user":
					if c := envCwd(e.it.Content); c != "" && m.Cwd == "" {
						m.Cwd, m.CwdKnown = c, true
					}
					haveUser = true
				case "assistant":
					haveAsst = true
				}
			}
		}
		if m.Start.IsZero() && e.hasT {
			m.Start = e.t
		}
	}
	if m.Start.IsZero() {
		if st, err := os.Stat(ref.Key); err == nil {
			m.Start = st.ModTime().UTC()
		}
	}
	if m.Cwd == "" {
		m.Cwd = s.opts.Cwd
	}
	if provider == "" {
		provider = "openai"
	}

	c := &converter{b: migrate.NewBuilder("codex", sourceID), provider: provider, tools: map[string]string{}, clock: m.Start}
	for _, e := range entries {
		if e.hasT {
			c.clock = e.t
		}
		c.line = e.n
		it := &e.it
		switch e.kind {
		case "turn_context":
			c.turnContext(it)
		case "response_item":
			c.responseItem(it, e.raw)
		case "event_msg":
			c.event(it, haveUser, haveAsst)
		case "compacted":
			c.closeRun()
			c.tip = c.b.Compaction(c.key(), c.tip, c.clock, jsonString(it.Message), c.lastTotal, nil)
		}
	}
	c.closeRun()
	for _, a := range c.all {
		a.node.SetMessage(a.a.JSON())
	}
	if c.b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Path, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

// converter turns the items of one rollout into a linear chain.
type converter struct {
	b         *migrate.Builder
	tip       *migrate.Node
	run       *asst // the open assistant run
	last      *asst // the latest assistant message
	all       []*asst
	pending   [][2]string // synthesized results: call id, text
	provider  string
	model     string
	effort    string
	tools     map[string]string
	clock     time.Time
	line      int
	lastTotal float64
}

type asst struct {
	node     *migrate.Node
	a        migrate.Assistant
	usageSet bool
}

func (c *converter) key() string { return "L" + strconv.Itoa(c.line) }

func (c *converter) turnContext(it *item) {
	if it.Model != "" && it.Model != c.model {
		c.closeRun()
		c.model = it.Model
		c.tip = c.b.ModelChange(c.key(), c.tip, c.clock, c.provider, c.model)
	}
	if it.Effort != "" && it.Effort != c.effort {
		c.closeRun()
		c.effort = it.Effort
		c.tip = c.b.ThinkingLevel(c.key(), c.tip, c.clock, c.effort)
	}
}

// open returns the open assistant run, starting one when needed.
func (c *converter) open() *asst {
	if c.run == nil {
		a := &asst{a: migrate.Assistant{API: "openai-responses", Provider: c.provider, Model: c.model, Timestamp: migrate.Millis(c.clock)}}
		a.node = c.b.Message(c.key(), c.tip, c.clock, nil)
		c.tip = a.node
		c.run, c.last = a, a
		c.all = append(c.all, a)
	}
	return c.run
}

// closeRun ends the open assistant run, answering its web searches.
func (c *converter) closeRun() {
	if c.run == nil {
		return
	}
	for _, p := range c.pending {
		msg := migrate.ToolResultMessage(p[0], "web_search", migrate.TextContent(p[1]), nil, false, migrate.Millis(c.clock))
		c.tip = c.b.Message(c.key(), c.tip, c.clock, msg)
	}
	c.pending = nil
	c.run = nil
}

// contextualPrefixes start the user messages Codex writes itself.
var contextualPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# agents.md instructions", "<turn_aborted>",
	"<user_shell_command>", "<skill>", "<skills_instructions>", "<subagent_notification>",
	"<permissions instructions>", "<collaboration_mode>", "<model_switch>", "<personality_spec>",
	"<hook_prompt",
}

func contextual(parts []part) bool {
	for _, p := range parts {
		t := strings.ToLower(strings.TrimSpace(p.Text))
		for _, pre := range contextualPrefixes {
			if strings.HasPrefix(t, pre) {
				return true
			}
		}
	}
	return false
}

var cwdRe = regexp.MustCompile(`<cwd>([^<]*)</cwd>`)

// envCwd returns the cwd of an <environment_context> message.
func envCwd(content json.RawMessage) string {
	var parts []part
	_ = json.Unmarshal(content, &parts)
	for _, p := range parts {
		if strings.HasPrefix(strings.TrimSpace(p.Text), "<environment_context>") {
			if m := cwdRe.FindStringSubmatch(p.Text); m != nil {
				return strings.TrimSpace(m[1])
			}
		}
	}
	return ""
}

func (c *converter) user(parts []part) {
	var blocks [][]byte
	for _, p := range parts {
		switch p.Type {
		case "input_text", "text":
			blocks = append(blocks, migrate.TextBlock(p.Text))
		case "input_image":
			if data, mime, ok := dataURL(p.ImageURL); ok {
				blocks = append(blocks, migrate.ImageBlock(data, mime))
			}
		}
	}
	if len(blocks) == 0 {
		return
	}
	c.closeRun()
	c.tip = c.b.Message(c.key(), c.tip, c.clock, migrate.UserMessage(migrate.Array(blocks), migrate.Millis(c.clock)))
}

// dataURL splits a base64 data URL.
func dataURL(u string) (data, mime string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return "", "", false
	}
	return data, strings.TrimSuffix(meta, ";base64"), true
}

func (c *converter) responseItem(it *item, raw []byte) {
	switch it.Type {
	case "message":
		var parts []part
		_ = json.Unmarshal(it.Content, &parts)
		switch it.Role {
		case "user":
			if !contextual(parts) {
				c.user(parts)
			}
		case "assistant":
			a := c.open()
			for _, p := range parts {
				if p.Type == "output_text" || p.Type == "text" {
					a.a.Content = append(a.a.Content, migrate.TextBlock(p.Text))
				}
			}
		}
	case "reasoning":
		a := c.open()
		var texts []string
		var sum []part
		_ = json.Unmarshal(it.Summary, &sum)
		for _, p := range sum {
			texts = append(texts, p.Text)
		}
		if len(texts) == 0 {
			var content []part
			_ = json.Unmarshal(it.Content, &content)
			for _, p := range content {
				texts = append(texts, p.Text)
			}
		}
		sig := ""
		if it.Encrypted != "" {
			if out, err := jsonl.Canonical(nil, raw); err == nil {
				sig = string(out)
			}
		}
		a.a.Content = append(a.a.Content, migrate.ThinkingBlock(strings.Join(texts, "\n\n"), sig, false))
	case "function_call":
		a := c.open()
		c.tools[it.CallID] = it.Name
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(it.CallID, it.Name, migrate.ObjectArgs(it.Arguments)))
	case "custom_tool_call":
		a := c.open()
		c.tools[it.CallID] = it.Name
		args := jsonl.NewObject(len(it.Input)+16).Raw("input", orNull(it.Input)).Bytes()
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(it.CallID, it.Name, args))
	case "local_shell_call":
		a := c.open()
		id := it.CallID
		if id == "" {
			id = jsonString(it.ID)
		}
		c.tools[id] = "local_shell"
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(id, "local_shell", migrate.ObjectArgs(it.Action)))
	case "web_search_call":
		a := c.open()
		id := jsonString(it.ID)
		if id == "" {
			id = "web_search_" + strconv.Itoa(c.line)
		}
		a.a.Content = append(a.a.Content, migrate.ToolCallBlock(id, "web_search", migrate.ObjectArgs(it.Action)))
		status := it.Status
		if status == "" {
			status = "completed"
		}
		c.pending = append(c.pending, [2]string{id, "web search " + status + " (Codex keeps no result)"})
	case "function_call_output", "custom_tool_call_output":
		c.closeRun()
		name := c.tools[it.CallID]
		if name == "" {
			name = "unknown"
		}
		content, isErr := output(it.Output)
		c.tip = c.b.Message(c.key(), c.tip, c.clock, migrate.ToolResultMessage(it.CallID, name, content, nil, isErr, migrate.Millis(c.clock)))
	}
}

func orNull(v []byte) []byte {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte("null")
	}
	return v
}

var exitRe = regexp.MustCompile(`(?:Process exited with code|Exit code:) (-?\d+)`)

// output converts a tool output to content blocks and tells whether it
// reports a failure.
func output(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	switch jsonl.KindOf(raw) {
	case jsonl.KindString:
		s, _ := jsonl.String(raw)
		return migrate.TextContent(s), textFailed(s)
	case jsonl.KindArray:
		var parts []part
		_ = json.Unmarshal(raw, &parts)
		var blocks [][]byte
		var texts []string
		for _, p := range parts {
			switch p.Type {
			case "input_text", "output_text", "text":
				blocks = append(blocks, migrate.TextBlock(p.Text))
				texts = append(texts, p.Text)
			case "input_image":
				if data, mime, ok := dataURL(p.ImageURL); ok {
					blocks = append(blocks, migrate.ImageBlock(data, mime))
				}
			}
		}
		return migrate.Array(blocks), textFailed(strings.Join(texts, "\n"))
	case jsonl.KindObject:
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		_ = json.Unmarshal(raw, &o)
		if o.Content != nil {
			content, failed := output(o.Content)
			if o.Success != nil {
				failed = !*o.Success
			}
			return content, failed
		}
		return migrate.TextContent(migrate.JSONText(raw)), false
	}
	return []byte("[]"), false
}

// textFailed reports whether a tool output says the command failed: a
// non-zero exit code in Codex's exec summary or its JSON form.
func textFailed(s string) bool {
	if m := exitRe.FindStringSubmatch(s); m != nil {
		return m[1] != "0"
	}
	var o struct {
		Metadata *struct {
			ExitCode *float64 `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &o) == nil && o.Metadata != nil && o.Metadata.ExitCode != nil {
		return *o.Metadata.ExitCode != 0
	}
	return false
}

func (c *converter) event(it *item, haveUser, haveAsst bool) {
	switch it.Type {
	case "token_count":
		if it.Info == nil || it.Info.Last == nil {
			return
		}
		u := it.Info.Last
		c.lastTotal = u.Total
		if c.last != nil && !c.last.usageSet {
			c.last.usageSet = true
			c.last.a.Usage = migrate.Usage{Input: u.Input - u.Cached, CacheRead: u.Cached, Output: u.Output, TotalTokens: u.Total}
		}
	case "turn_aborted":
		if c.last != nil {
			c.last.a.StopReason = "aborted"
		}
	case "user_message":
		if !haveUser {
			if s := jsonString(it.Message); s != "" {
				c.user([]part{{Type: "input_text", Text: s}})
			}
		}
	case "agent_message":
		if !haveAsst {
			if s := jsonString(it.Message); s != "" {
				a := c.open()
				a.a.Content = append(a.a.Content, migrate.TextBlock(s))
			}
		}
	}
}

func jsonString(raw json.RawMessage) string {
	s, _ := jsonl.String(bytes.TrimSpace(raw))
	return s
}

// findString returns the first string member named k anywhere in raw.
func findString(raw json.RawMessage, k string) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x[k].(string); ok && s != "" {
				return s
			}
			keys := make([]string, 0, len(x))
			for key := range x {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				if s := walk(x[key]); s != "" {
					return s
				}
			}
		case []any:
			for _, e := range x {
				if s := walk(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(v)
}
