package claude

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	pimessage "github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// rec is one record of a Claude Code session file.
type rec struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID *string         `json:"logicalParentUuid"`
	SessionID         string          `json:"sessionId"`
	Timestamp         json.RawMessage `json:"timestamp"`
	Cwd               string          `json:"cwd"`
	Version           string          `json:"version"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	IsAPIError        bool            `json:"isApiErrorMessage"`
	AgentID           string          `json:"agentId"`
	Message           json.RawMessage `json:"message"`
	Content           json.RawMessage `json:"content"`
	CompactMetadata   struct {
		PreTokens float64 `json:"preTokens"`
	} `json:"compactMetadata"`
	CustomTitle string `json:"customTitle"`

	raw     []byte
	line    int
	time    time.Time
	hasTime bool
}

// message is the "message" of a user or assistant record.
type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      *struct {
		Input      float64 `json:"input_tokens"`
		Output     float64 `json:"output_tokens"`
		CacheRead  float64 `json:"cache_read_input_tokens"`
		CacheWrite float64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// block is one content block.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// blocks decodes content that is a string (ok false) or a block list.
func blocks(raw json.RawMessage) (s string, bs []block, isString bool) {
	if len(raw) == 0 {
		return "", nil, false
	}
	if str, ok := jsonl.String(raw); ok {
		return str, nil, true
	}
	_ = json.Unmarshal(raw, &bs)
	return "", bs, false
}

type converter struct {
	store   *store
	project *project
	conv    *migrate.Conversion
}

// read decodes a session file; damaged lines are recorded and skipped.
func (c *converter) read(path string) ([]*rec, error) {
	fh, err := srcfs.OpenTracked(c.store.opts.FS, path, c.store.opts.Progress)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var recs []*rec
	err = migrate.EachLine(fh, c.store.opts.MaxLine, func(n int, line []byte, err error) bool {
		r := &rec{}
		if err == nil {
			err = migrate.DecodeLine(line, r)
		}
		if err != nil {
			c.conv.Damage = append(c.conv.Damage, &migrate.Damage{Path: path, Line: n, Err: err})
			return true
		}
		if r.Type == "system" {
			r.raw = append([]byte(nil), line...) // kept in claude-system entries
		}
		r.line = n
		r.time, r.hasTime = migrate.ParseTime(r.Timestamp)
		recs = append(recs, r)
		return true
	})
	if err != nil {
		return recs, &migrate.Damage{Path: path, Err: err}
	}
	return recs, nil
}

func stem(path string) string { return strings.TrimSuffix(filepath.Base(path), ".jsonl") }

// hasConversation reports whether recs hold a user or assistant record.
func hasConversation(recs []*rec) bool {
	for _, r := range recs {
		if r.Type == "user" || r.Type == "assistant" {
			return true
		}
	}
	return false
}

// main converts a session file, its in-file sidechains and its subagent
// files.
func (c *converter) main(ctx context.Context, file string) error {
	recs, err := c.read(file)
	if err != nil && recs == nil {
		return err
	}
	if err != nil {
		c.conv.Damage = append(c.conv.Damage, err.(*migrate.Damage))
	}
	sid := stem(file)
	var main []*rec
	var sideKeys []string
	side := make(map[string][]*rec)
	sideRecs := make(map[string]*rec)
	for _, r := range recs {
		if r.IsSidechain && r.UUID != "" {
			sideRecs[r.UUID] = r
		}
	}
	for _, r := range recs {
		if !r.IsSidechain {
			main = append(main, r)
			continue
		}
		k := r.AgentID
		if k == "" {
			k = sideRoot(r, sideRecs)
		}
		if _, ok := side[k]; !ok {
			sideKeys = append(sideKeys, k)
		}
		side[k] = append(side[k], r)
	}
	if !hasConversation(main) {
		// A file of sidechain records only (Claude Code 2.0 warm-ups):
		// they are the session.
		main, side, sideKeys = recs, nil, nil
	}
	c.add(c.session(sid, file, main, ""), sid, file)
	for _, k := range sideKeys {
		c.add(c.session(sid+"/sidechain-"+k, file, side[k], sid), sid+"/sidechain-"+k, file)
	}
	for _, f := range c.project.agents[sid] {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		recs, err := c.read(f)
		if err != nil {
			c.conv.Damage = append(c.conv.Damage, asDamage(f, err))
			if recs == nil {
				continue
			}
		}
		c.add(c.session(sid+"/"+stem(f), f, recs, sid), sid+"/"+stem(f), f)
	}
	return nil
}

// agentName names a hierarchical subagent from its .meta.json:
// "<agentType>: <description>".
func agentName(fsys vfs.FS, file string) string {
	data, err := srcfs.ReadFile(fsys, strings.TrimSuffix(file, ".jsonl")+".meta.json")
	if err != nil {
		return ""
	}
	var m struct {
		AgentType   string `json:"agentType"`
		Description string `json:"description"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	switch {
	case m.AgentType != "" && m.Description != "":
		return m.AgentType + ": " + m.Description
	case m.Description != "":
		return m.Description
	}
	return m.AgentType
}

// orphan converts a subagent file whose parent session file is missing.
func (c *converter) orphan(file string) error {
	recs, err := c.read(file)
	if err != nil && recs == nil {
		return err
	}
	if err != nil {
		c.conv.Damage = append(c.conv.Damage, asDamage(file, err))
	}
	parent := ""
	for _, r := range recs {
		if r.SessionID != "" {
			parent = r.SessionID
			break
		}
	}
	if parent == "" && filepath.Base(filepath.Dir(file)) == "subagents" {
		parent = filepath.Base(filepath.Dir(filepath.Dir(file)))
	}
	id := stem(file)
	if parent != "" {
		id = parent + "/" + id
	}
	c.add(c.session(id, file, recs, parent), id, file)
	return nil
}

// add adds a converted session, or reports the source session sourceID
// as skipped when nothing of it could be imported.
func (c *converter) add(s *migrate.Imported, sourceID, file string) {
	if s == nil {
		c.conv.Skipped = append(c.conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: file, Reason: migrate.SkipEmpty})
		return
	}
	c.conv.Sessions = append(c.conv.Sessions, s)
}

func asDamage(path string, err error) *migrate.Damage {
	if d, ok := err.(*migrate.Damage); ok {
		return d
	}
	return &migrate.Damage{Path: path, Err: err}
}

// sideRoot returns the uuid of the first record of r's sidechain.
func sideRoot(r *rec, side map[string]*rec) string {
	cur := r
	for range len(side) + 1 {
		if cur.ParentUUID == nil || *cur.ParentUUID == "" {
			break
		}
		p, ok := side[*cur.ParentUUID]
		if !ok {
			break
		}
		cur = p
	}
	return cur.UUID
}

// session converts one group of records into a session; nil when nothing
// in it can be imported.
func (c *converter) session(sourceID, path string, recs []*rec, parentSourceID string) *migrate.Imported {
	b := migrate.NewBuilder("claude", sourceID)
	g := newGroup(b, recs)
	g.convert()
	if b.Len() == 0 {
		return nil
	}
	if name := c.name(recs); name != "" {
		b.SetName(name)
	} else if name := agentName(c.store.opts.FS, path); name != "" {
		b.SetName(name)
	}
	m := migrate.Meta{SourcePath: path, ParentSourceID: parentSourceID}
	for _, r := range recs {
		if r.hasTime && (m.Start.IsZero() || r.time.Before(m.Start)) {
			m.Start = r.time
		}
		if m.Cwd == "" && r.Cwd != "" {
			m.Cwd, m.CwdKnown = r.Cwd, true
		}
		if m.SourceVersion == "" && r.Version != "" {
			m.SourceVersion = r.Version
		}
	}
	if m.Start.IsZero() {
		m.Start = time.UnixMilli(0).UTC()
	}
	if m.Cwd == "" {
		if cwd := c.store.historyCwd(filepath.Base(c.project.dir)); cwd != "" {
			m.Cwd, m.CwdKnown = cwd, true
		} else {
			m.Cwd = c.store.opts.Cwd
		}
	}
	return b.Finish(m)
}

// name returns the session's title: its last custom-title record, else
// the summary record (of any file of the project) whose leaf is the
// latest record of this group.
func (c *converter) name(recs []*rec) string {
	title := ""
	for _, r := range recs {
		if r.Type == "custom-title" && r.CustomTitle != "" {
			title = r.CustomTitle
		}
	}
	if title != "" {
		return title
	}
	sums := c.store.summaries(c.project)
	best := ""
	for _, r := range recs {
		if s, ok := sums[r.UUID]; ok && r.UUID != "" {
			best = s.text
		}
	}
	return best
}

// group converts the records of one session into builder nodes.
type group struct {
	b          *migrate.Builder
	recs       []*rec
	byUUID     map[string]*rec
	idx        map[*rec]int
	nodeOf     map[string]*migrate.Node
	last       *migrate.Node
	lastMsg    *migrate.Node
	lastResult map[*migrate.Node]*migrate.Node
	merged     map[string]*amsg
	asst       []*amsg
	isAsst     map[*migrate.Node]bool
	tools      map[string]string
	summaryOf  map[string]*rec // compact_boundary uuid -> its summary record
	consumed   map[*rec]bool
	clock      time.Time
}

type amsg struct {
	node *migrate.Node
	a    migrate.Assistant
}

func newGroup(b *migrate.Builder, recs []*rec) *group {
	g := &group{
		b: b, recs: recs,
		byUUID:     make(map[string]*rec),
		idx:        make(map[*rec]int),
		nodeOf:     make(map[string]*migrate.Node),
		lastResult: make(map[*migrate.Node]*migrate.Node),
		merged:     make(map[string]*amsg),
		isAsst:     make(map[*migrate.Node]bool),
		tools:      make(map[string]string),
		summaryOf:  make(map[string]*rec),
		consumed:   make(map[*rec]bool),
	}
	for i, r := range recs {
		g.idx[r] = i
		if r.UUID != "" {
			if _, dup := g.byUUID[r.UUID]; !dup {
				g.byUUID[r.UUID] = r
			}
		}
		switch r.Type {
		case "assistant":
			var m message
			if json.Unmarshal(r.Message, &m) == nil {
				_, bs, _ := blocks(m.Content)
				for _, bl := range bs {
					if bl.Type == "tool_use" {
						g.tools[bl.ID] = bl.Name
					}
				}
			}
		case "user":
			if r.IsCompactSummary && r.ParentUUID != nil {
				if _, ok := g.summaryOf[*r.ParentUUID]; !ok {
					g.summaryOf[*r.ParentUUID] = r
				}
			}
		}
	}
	return g
}

func (g *group) convert() {
	for i, r := range g.recs {
		if r.hasTime {
			g.clock = r.time
		} else if g.clock.IsZero() {
			g.clock = time.UnixMilli(0).UTC()
		}
		switch r.Type {
		case "user":
			g.user(r, i)
		case "assistant":
			g.assistant(r, i)
		case "system":
			if r.Subtype == "compact_boundary" {
				g.compact(r, i)
			} else {
				g.system(r, i)
			}
		}
	}
	for _, m := range g.asst {
		m.node.SetMessage(m.a.JSON())
	}
	if g.lastMsg != nil {
		g.b.SetLeaf(g.lastMsg.LastDescendant())
	}
}

// resolve returns the node a record with parent p hangs below: the node
// of p, or of p's nearest kept ancestor; nil for a root; the previous
// node when p names a record that is not in the file (or comes later).
func (g *group) resolve(p *string, self int) *migrate.Node {
	if p == nil || *p == "" {
		return nil
	}
	cur := *p
	for range len(g.recs) + 1 {
		if n := g.nodeOf[cur]; n != nil {
			return n
		}
		r := g.byUUID[cur]
		if r == nil || g.idx[r] >= self {
			return g.last
		}
		next := r.ParentUUID
		if r.Subtype == "compact_boundary" && r.LogicalParentUUID != nil && *r.LogicalParentUUID != "" {
			next = r.LogicalParentUUID
		}
		if next == nil || *next == "" {
			return nil
		}
		cur = *next
	}
	return g.last
}

func (g *group) key(r *rec) string {
	if r.UUID != "" {
		return r.UUID
	}
	return "line:" + strconv.Itoa(r.line)
}

func (g *group) placed(r *rec, n *migrate.Node) {
	if r.UUID != "" {
		g.nodeOf[r.UUID] = n
	}
	g.last = n
	if n.IsMessage() {
		g.lastMsg = n
	}
}

// commandPrefixes start the user messages Claude Code writes for slash
// commands and ! shell commands.
var commandPrefixes = []string{
	"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
	"<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
}

func isCommand(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range commandPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func (g *group) user(r *rec, i int) {
	if g.consumed[r] {
		return
	}
	var m message
	if err := json.Unmarshal(r.Message, &m); err != nil {
		return
	}
	parent := g.resolve(r.ParentUUID, i)
	ms := migrate.Millis(g.clock)
	str, bs, isString := blocks(m.Content)
	if r.IsCompactSummary {
		n := g.b.Compaction(g.key(r), parent, g.clock, textOf(str, bs), 0, nil)
		g.placed(r, n)
		return
	}
	var results []block
	var rest [][]byte
	firstText := str
	for _, bl := range bs {
		switch bl.Type {
		case "tool_result":
			results = append(results, bl)
		case "text":
			if len(rest) == 0 && firstText == "" {
				firstText = bl.Text
			}
			rest = append(rest, migrate.TextBlock(bl.Text))
		case "image":
			if bl.Source != nil && bl.Source.Data != "" {
				rest = append(rest, migrate.ImageBlock(bl.Source.Data, bl.Source.MediaType))
			}
		}
	}
	var n *migrate.Node
	base := parent
	for k, bl := range results {
		p := parent
		if k == 0 && g.isAsst[base] && g.lastResult[base] != nil {
			p = g.lastResult[base]
		}
		key := g.key(r)
		if k > 0 {
			key += "#" + strconv.Itoa(k)
		}
		name := g.tools[bl.ToolUseID]
		if name == "" {
			name = "unknown"
		}
		msg := migrate.ToolResultMessage(bl.ToolUseID, name, resultContent(bl.Content), nil, bl.IsError, ms)
		n = g.b.Message(key, p, g.clock, msg)
		if g.isAsst[base] {
			g.lastResult[base] = n
		}
		parent = n
		g.placed(r, n)
	}
	var content []byte
	switch {
	case isString && str != "":
		content = jsonl.AppendString(nil, str)
	case len(rest) > 0:
		content = migrate.Array(rest)
	default:
		return
	}
	key := g.key(r)
	if len(results) > 0 {
		key += "#text"
	}
	switch {
	case r.IsMeta:
		n = g.b.CustomMessage(key, parent, g.clock, "claude-meta", content, false, nil)
	case isCommand(firstText):
		n = g.b.CustomMessage(key, parent, g.clock, "claude-command", content, true, nil)
	default:
		n = g.b.Message(key, parent, g.clock, migrate.UserMessage(content, ms))
	}
	g.placed(r, n)
}

// resultContent converts a tool_result's content to pi content blocks.
func resultContent(raw json.RawMessage) []byte {
	str, bs, isString := blocks(raw)
	if isString {
		if str == "" {
			return []byte("[]")
		}
		return migrate.TextContent(str)
	}
	var out [][]byte
	for _, bl := range bs {
		switch bl.Type {
		case "text":
			out = append(out, migrate.TextBlock(bl.Text))
		case "image":
			if bl.Source != nil && bl.Source.Data != "" {
				out = append(out, migrate.ImageBlock(bl.Source.Data, bl.Source.MediaType))
			}
		}
	}
	return migrate.Array(out)
}

func textOf(str string, bs []block) string {
	if str != "" {
		return str
	}
	var parts []string
	for _, bl := range bs {
		if bl.Type == "text" {
			parts = append(parts, bl.Text)
		}
	}
	return strings.Join(parts, "\n")
}

var stopReasons = map[string]string{
	"end_turn":      "stop",
	"stop_sequence": "stop",
	"pause_turn":    "stop",
	"tool_use":      "toolUse",
	"max_tokens":    "length",
	"refusal":       "error",
}

func (g *group) assistant(r *rec, i int) {
	var m message
	if err := json.Unmarshal(r.Message, &m); err != nil {
		return
	}
	am := g.merged[m.ID]
	if m.ID == "" || am == nil {
		am = &amsg{a: migrate.Assistant{
			API: "anthropic-messages", Provider: "anthropic", Model: m.Model,
			Timestamp: migrate.Millis(g.clock),
		}}
		am.node = g.b.Message(g.key(r), g.resolve(r.ParentUUID, i), g.clock, nil)
		g.isAsst[am.node] = true
		g.asst = append(g.asst, am)
		if m.ID != "" {
			g.merged[m.ID] = am
		}
		g.placed(r, am.node)
	} else if r.UUID != "" {
		g.nodeOf[r.UUID] = am.node
	}
	str, bs, _ := blocks(m.Content)
	if str != "" {
		am.a.Content = append(am.a.Content, migrate.TextBlock(str))
	}
	var texts []string
	for _, bl := range bs {
		switch bl.Type {
		case "text":
			am.a.Content = append(am.a.Content, migrate.TextBlock(bl.Text))
			texts = append(texts, bl.Text)
		case "thinking":
			am.a.Content = append(am.a.Content, migrate.ThinkingBlock(bl.Thinking, bl.Signature, false))
		case "redacted_thinking":
			am.a.Content = append(am.a.Content, migrate.ThinkingBlock("", bl.Data, true))
		case "tool_use":
			am.a.Content = append(am.a.Content, migrate.ToolCallBlock(bl.ID, bl.Name, migrate.ObjectArgs(bl.Input)))
		}
	}
	if m.Usage != nil {
		am.a.Usage = pimessage.Usage{Input: migrate.Tokens(m.Usage.Input), Output: migrate.Tokens(m.Usage.Output), CacheRead: migrate.Tokens(m.Usage.CacheRead), CacheWrite: migrate.Tokens(m.Usage.CacheWrite)}
	}
	if m.StopReason != nil {
		if s, ok := stopReasons[*m.StopReason]; ok {
			am.a.StopReason = s
		}
	}
	if r.IsAPIError {
		am.a.StopReason = "error"
		if str != "" {
			texts = append(texts, str)
		}
		am.a.ErrorMessage = strings.Join(texts, "\n")
	}
}

func (g *group) compact(r *rec, i int) {
	p := r.ParentUUID
	if r.LogicalParentUUID != nil && *r.LogicalParentUUID != "" {
		p = r.LogicalParentUUID
	}
	parent := g.resolve(p, i)
	summary := ""
	if s := g.summaryOf[r.UUID]; s != nil {
		var m message
		if json.Unmarshal(s.Message, &m) == nil {
			str, bs, _ := blocks(m.Content)
			summary = textOf(str, bs)
		}
		g.consumed[s] = true
	} else if s, ok := jsonl.String(r.Content); ok {
		summary = s
	}
	n := g.b.Compaction(g.key(r), parent, g.clock, summary, r.CompactMetadata.PreTokens, nil)
	g.placed(r, n)
	if s := g.summaryOf[r.UUID]; s != nil && s.UUID != "" {
		g.nodeOf[s.UUID] = n
	}
}

// envelope keys are left out of the data of claude-system entries.
var envelope = []string{
	"parentUuid", "logicalParentUuid", "isSidechain", "userType", "cwd", "sessionId",
	"version", "gitBranch", "uuid", "timestamp", "type", "entrypoint", "slug",
}

func (g *group) system(r *rec, i int) {
	data := r.raw
	if rr, err := migrate.ParseRecord(r.raw); err == nil {
		for _, k := range envelope {
			rr.Delete(k)
		}
		data = rr.AppendJSON(nil)
	}
	n := g.b.Custom(g.key(r), g.resolve(r.ParentUUID, i), g.clock, "claude-system", data)
	g.placed(r, n)
}
