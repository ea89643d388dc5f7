package agentuse

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// The part types AgentUse defines, each built with its members in the
// order AgentUse writes them. Times are epoch milliseconds of the given
// time.Time. Optional members are omitted when zero, as AgentUse leaves
// undefined members out.

func msJSON(t time.Time) []byte { return jsonl.AppendNumber(nil, float64(t.UnixMilli())) }

func startJSON(start time.Time) rawJSON {
	return rawJSON(jsonl.NewObject(32).Raw("start", msJSON(start)).Bytes())
}

func field(k string, v any) Field { return Field{Key: k, Value: v} }

// TextPart is an assistant text part as the runtime creates it on
// the first text delta: {type: "text", text, time: {start}}. Later deltas
// replace text with UpdatePart; FinishText ends it.
func TextPart(text string, start time.Time) Part {
	return Part{Type: "text", Fields: []Field{field("text", text), field("time", startJSON(start))}}
}

// UserTextPart is a synthetic follow-up user prompt: {type:
// "text", role: "user", synthetic: true, text, time: {start, end}}.
func UserTextPart(text string, start, end time.Time) Part {
	t := jsonl.NewObject(48).Raw("start", msJSON(start)).Raw("end", msJSON(end)).Bytes()
	return Part{Type: "text", Fields: []Field{
		field("role", "user"), field("synthetic", true), field("text", text), field("time", rawJSON(t)),
	}}
}

// ReasoningPart is a reasoning part: {type: "reasoning", text,
// metadata?, time: {start}}. metadata (provider data such as a signature)
// is omitted when nil.
func ReasoningPart(text string, metadata any, start time.Time) Part {
	f := []Field{field("text", text)}
	if metadata != nil {
		f = append(f, field("metadata", metadata))
	}
	return Part{Type: "reasoning", Fields: append(f, field("time", startJSON(start)))}
}

// ToolPart is a tool call as the runtime creates it: {type:
// "tool", callID, tool, state: {status: "running", input, time: {start}}}.
// CompleteTool, FailTool, SuspendTool and ResumeTool move it on.
func ToolPart(callID, tool string, input any, start time.Time) Part {
	in, err := encodeAUValue(input)
	if err != nil || input == nil {
		in = []byte("{}")
	}
	state := jsonl.NewObject(len(in)+64).String("status", StatusRunning).Raw("input", in).
		Raw("time", startJSON(start)).Bytes()
	return Part{Type: "tool", Fields: []Field{
		field("callID", callID), field("tool", tool), field("state", rawJSON(state)),
	}}
}

// LogPart is a log line: {type: "log", level, message, toolId?,
// time: {start}}. level is debug, info, warn, error or system; toolID, a
// tool call id, is omitted when "".
func LogPart(level, message, toolID string, start time.Time) Part {
	f := []Field{field("level", level), field("message", message)}
	if toolID != "" {
		f = append(f, field("toolId", toolID))
	}
	return Part{Type: "log", Fields: append(f, field("time", startJSON(start)))}
}

// PartError describes an error part.
type PartError struct {
	Source     string // agent or compaction
	Message    string
	Code       string // omitted when ""
	Detail     string // provider response body; omitted when ""
	StatusCode int    // omitted when 0
}

// ErrorPart is a model or API failure: {type: "error", source,
// message, code?, detail?, statusCode?, time: {start}}.
func ErrorPart(e PartError, start time.Time) Part {
	f := []Field{field("source", e.Source), field("message", e.Message)}
	if e.Code != "" {
		f = append(f, field("code", e.Code))
	}
	if e.Detail != "" {
		f = append(f, field("detail", e.Detail))
	}
	if e.StatusCode != 0 {
		f = append(f, field("statusCode", e.StatusCode))
	}
	return Part{Type: "error", Fields: append(f, field("time", startJSON(start)))}
}

// Compaction describes a context compaction.
type Compaction struct {
	Reason             string // limit, approval or step
	TokensBefore       int64
	TokensAfter        int64
	MessagesBefore     int64
	MessagesAfter      int64
	UsagePercentBefore *float64 // omitted when nil
}

// CompactionPart is {type: "compaction", reason, tokensBefore,
// tokensAfter, messagesBefore, messagesAfter, usagePercentBefore?, time:
// {start}}.
func CompactionPart(c Compaction, start time.Time) Part {
	f := []Field{
		field("reason", c.Reason), field("tokensBefore", c.TokensBefore), field("tokensAfter", c.TokensAfter),
		field("messagesBefore", c.MessagesBefore), field("messagesAfter", c.MessagesAfter),
	}
	if c.UsagePercentBefore != nil {
		f = append(f, field("usagePercentBefore", rawJSON(jsonl.AppendNumber(nil, *c.UsagePercentBefore))))
	}
	return Part{Type: "compaction", Fields: append(f, field("time", startJSON(start)))}
}

// Learning describes a learning capture.
type Learning struct {
	Status string // captured, none or failed
	Source string // auto or approval
	Count  int64
	Titles []string // omitted when nil
	Detail string   // omitted when ""
}

// LearningPart is {type: "learning", status, source, count,
// titles?, detail?, time: {start}}.
func LearningPart(l Learning, start time.Time) Part {
	f := []Field{field("status", l.Status), field("source", l.Source), field("count", l.Count)}
	if l.Titles != nil {
		f = append(f, field("titles", l.Titles))
	}
	if l.Detail != "" {
		f = append(f, field("detail", l.Detail))
	}
	return Part{Type: "learning", Fields: append(f, field("time", startJSON(start)))}
}

// File describes a file part.
type File struct {
	Mime     string
	Filename string // omitted when ""
	URL      string
	Source   any // {type: file|symbol, path, text?: {value, start, end}}; omitted when nil
}

// FilePart is {type: "file", mime, filename?, url, source?}.
// AgentUse defines it but its runtime never writes one.
func FilePart(f File) Part {
	fs := []Field{field("mime", f.Mime)}
	if f.Filename != "" {
		fs = append(fs, field("filename", f.Filename))
	}
	fs = append(fs, field("url", f.URL))
	if f.Source != nil {
		fs = append(fs, field("source", f.Source))
	}
	return Part{Type: "file", Fields: fs}
}

// AgentPart is {type: "agent", name, source?} where source is
// {value, start, end}; it is omitted when nil. Never written by the
// AgentUse runtime.
func AgentPart(name string, source any) Part {
	f := []Field{field("name", name)}
	if source != nil {
		f = append(f, field("source", source))
	}
	return Part{Type: "agent", Fields: f}
}

// StepStartPart is {type: "step-start"}. Never written by the
// AgentUse runtime.
func StepStartPart() Part { return Part{Type: "step-start"} }

// StepFinishPart is {type: "step-finish", cost, tokens: {input,
// output, reasoning, cache: {read, write}}}. Never written by the AgentUse
// runtime.
func StepFinishPart(cost float64, tokens Tokens) Part {
	return Part{Type: "step-finish", Fields: []Field{
		field("cost", rawJSON(jsonl.AppendNumber(nil, cost))), field("tokens", rawJSON(tokens.json())),
	}}
}

// SnapshotPart is {type: "snapshot", snapshot}. Never written by
// the AgentUse runtime.
func SnapshotPart(snapshot string) Part {
	return Part{Type: "snapshot", Fields: []Field{field("snapshot", snapshot)}}
}

// PatchPart is {type: "patch", hash, files}. Never written by the
// AgentUse runtime.
func PatchPart(hash string, files []string) Part {
	if files == nil {
		files = []string{}
	}
	return Part{Type: "patch", Fields: []Field{field("hash", hash), field("files", files)}}
}

// FinishText ends a streamed text or reasoning part: text becomes text
// with trailing whitespace removed (JavaScript's trimEnd) and time becomes
// {start, end: now}, start kept from the part (now when it has none).
func (w *Session) FinishText(messageID, partID, text string) error {
	now := w.s.now()
	return w.updatePart(messageID, partID, func(o *auObject) error {
		start := o.sub("time").get("start")
		if start == nil {
			start = msJSON(now)
		}
		o.set("text", jsonl.AppendString(nil, strings.TrimRightFunc(text, jsonl.IsJSWhitespace)))
		o.set("time", jsonl.NewObject(48).Raw("start", start).Raw("end", msJSON(now)).Bytes())
		return nil
	})
}

// toolState reads a tool part's state for a transition.
func toolState(o *auObject) (state *auObject, input []byte, err error) {
	if o.str("type") != "tool" {
		return nil, nil, fmt.Errorf("not a tool part")
	}
	state = o.sub("state")
	input = state.get("input")
	if input == nil {
		input = []byte("{}")
	}
	return state, input, nil
}

func optionalJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return encodeAUValue(v)
}

// CompleteTool records a tool's result as the stream does: state becomes
// {status: "completed", input, output, time: {start, end: now}, metadata?}.
// output is the tool's return value; metadata (for a subagent call,
// {tokens}) is omitted when nil.
func (w *Session) CompleteTool(messageID, partID string, output, metadata any) error {
	return w.finishTool(messageID, partID, "completed", "output", output, metadata)
}

// FailTool records a tool failure as the stream does: state becomes
// {status: "error", input, error, time: {start, end: now}, metadata?}.
func (w *Session) FailTool(messageID, partID, message string, metadata any) error {
	return w.finishTool(messageID, partID, StatusError, "error", message, metadata)
}

func (w *Session) finishTool(messageID, partID, status, key string, value, metadata any) error {
	now := w.s.now()
	val, err := optionalJSON(value)
	if err != nil {
		return fmt.Errorf("update part %s: %s: %w", partID, key, err)
	}
	meta, err := optionalJSON(metadata)
	if err != nil {
		return fmt.Errorf("update part %s: metadata: %w", partID, err)
	}
	return w.updatePart(messageID, partID, func(o *auObject) error {
		state, input, err := toolState(o)
		if err != nil {
			return err
		}
		start := state.sub("time").get("start")
		if start == nil {
			start = msJSON(now)
		}
		b := jsonl.NewObject(len(input)+len(val)+len(meta)+96).String("status", status).Raw("input", input)
		if val != nil {
			b.Raw(key, val)
		}
		b.Raw("time", jsonl.NewObject(48).Raw("start", start).Raw("end", msJSON(now)).Bytes())
		if meta != nil {
			b.Raw("metadata", meta)
		}
		o.set("state", b.Bytes())
		return nil
	})
}

// SuspendTool parks a tool at an approval gate: state becomes {status:
// "pending", input, suspendedAt: now, resumePayload?}. resumePayload is
// {kind: "await_human", prompt?, surface?, approvalUrl?, expiresAt?,
// resumeToken?, channelMessage?} or {kind: "subagent_wait",
// childSessionID?, childAgentName?}; it is omitted when nil.
func (w *Session) SuspendTool(messageID, partID string, resumePayload any) error {
	now := w.s.now()
	payload, err := optionalJSON(resumePayload)
	if err != nil {
		return fmt.Errorf("update part %s: resumePayload: %w", partID, err)
	}
	return w.updatePart(messageID, partID, func(o *auObject) error {
		_, input, err := toolState(o)
		if err != nil {
			return err
		}
		b := jsonl.NewObject(len(input)+len(payload)+96).String("status", "pending").Raw("input", input).
			Raw("suspendedAt", msJSON(now))
		if payload != nil {
			b.Raw("resumePayload", payload)
		}
		o.set("state", b.Bytes())
		return nil
	})
}

// ResumeTool applies the result of a resumed gate as AgentUse's
// applyResumeToolResult does: state becomes {status: "completed", input,
// output, metadata: {resumePayload}?, time: {start: suspendedAt, end:
// now}}, metadata present when the pending state had a resumePayload.
func (w *Session) ResumeTool(messageID, partID string, output any) error {
	now := w.s.now()
	val, err := optionalJSON(output)
	if err != nil {
		return fmt.Errorf("update part %s: output: %w", partID, err)
	}
	return w.updatePart(messageID, partID, func(o *auObject) error {
		state, input, err := toolState(o)
		if err != nil {
			return err
		}
		start := state.get("suspendedAt")
		if jsonl.KindOf(start) != jsonl.KindNumber {
			start = msJSON(now)
		}
		b := jsonl.NewObject(len(input)+len(val)+128).String("status", StatusCompleted).Raw("input", input)
		if val != nil {
			b.Raw("output", val)
		}
		if p := state.get("resumePayload"); p != nil {
			b.Raw("metadata", jsonl.NewObject(len(p)+32).Raw("resumePayload", p).Bytes())
		}
		b.Raw("time", jsonl.NewObject(48).Raw("start", start).Raw("end", msJSON(now)).Bytes())
		o.set("state", b.Bytes())
		return nil
	})
}

// StopOptions configure a stop. Zero values mean AgentUse's:
// code USER_STOPPED, message "Session stopped by user".
type StopOptions struct {
	Code    string
	Message string
}

func (o StopOptions) withDefaults() StopOptions {
	if o.Code == "" {
		o.Code = "USER_STOPPED"
	}
	if o.Message == "" {
		o.Message = "Session stopped by user"
	}
	return o
}

// Stopped reports what a stop did to one session.
type Stopped struct {
	SessionID string
	AgentName string // agent.name, or agent.id when the name is empty
	WasStatus string
	Stopped   bool // the session was running or suspended and is now "error"
}

// Stop stops this session as AgentUse's stopSessionTree does for each
// session of a tree: a running or suspended session gets status "error"
// and error {code, message, time}; then, if it was stopped or already
// carries an error with the same code, each of its running or pending tool
// parts becomes {status: "error", input, error: message, metadata:
// {resumePayload}?, time: {start, end}}.
func (w *Session) Stop(o StopOptions) (Stopped, error) {
	return w.stopAt(o.withDefaults(), w.s.now())
}

func (w *Session) stopAt(o StopOptions, now time.Time) (Stopped, error) {
	var res Stopped
	file := filepath.Join(w.dir, layout.AgentUseSessionFile)
	w.mu.Lock()
	if err := w.check(); err != nil {
		w.mu.Unlock()
		return res, err
	}
	sess, err := w.s.readObject(file)
	w.mu.Unlock()
	if err != nil {
		return res, fmt.Errorf("stop session %s: %w", w.id, err)
	}
	agent := sess.sub("agent")
	res = Stopped{SessionID: w.id, AgentName: agent.str("name"), WasStatus: sess.str("status")}
	if res.AgentName == "" {
		res.AgentName = agent.str("id")
	}
	res.Stopped = res.WasStatus == StatusRunning || res.WasStatus == StatusSuspended
	stopParts := res.Stopped || sess.sub("error").str("code") == o.Code
	if res.Stopped {
		e := jsonl.NewObject(128).String("code", o.Code).String("message", o.Message).Raw("time", msJSON(now)).Bytes()
		err := w.update(file, func(s *auObject) error {
			s.set("status", jsonl.AppendString(nil, StatusError))
			s.set("error", e)
			t := s.sub("time")
			t.set("updated", msJSON(now))
			s.set("time", t.compact())
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("stop session %s: %w", w.id, err)
		}
	}
	if !stopParts {
		return res, nil
	}
	parts, err := w.s.ownPartFiles(w.dir)
	if err != nil {
		return res, fmt.Errorf("stop session %s: %w", w.id, err)
	}
	for _, p := range parts {
		err := w.update(p, func(part *auObject) error {
			if part.str("type") != "tool" {
				return nil
			}
			state := part.sub("state")
			status := state.str("status")
			if status != "pending" && status != StatusRunning {
				return nil
			}
			input := state.get("input")
			if input == nil {
				input = []byte("{}")
			}
			var start []byte
			if status == StatusRunning {
				start = state.sub("time").get("start")
			} else if start = state.get("suspendedAt"); start == nil {
				start = msJSON(now)
			}
			b := jsonl.NewObject(len(input)+256).String("status", StatusError).Raw("input", input).String("error", o.Message)
			if p := state.get("resumePayload"); status == "pending" && p != nil {
				b.Raw("metadata", jsonl.NewObject(len(p)+32).Raw("resumePayload", p).Bytes())
			}
			t := jsonl.NewObject(48)
			if start != nil {
				t.Raw("start", start)
			}
			b.Raw("time", t.Raw("end", msJSON(now)).Bytes())
			part.set("state", b.Bytes())
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("stop session %s: %w", w.id, err)
		}
	}
	return res, nil
}

// StopSessionTree stops the session name stands for (see Resolve) and
// every session below it, parents before children, as AgentUse's
// stopSessionTree does (see Session.Stop). Each session is stopped under
// its own writer lock, taken in turn (waiting with StoreOptions.Wait), so
// a session another writer holds fails the call with ErrLocked; sessions
// stopped before that stay stopped. Only a session's own parts are
// converted, under its own lock.
func (s *Store) StopSessionTree(ctx context.Context, name string, o StopOptions) ([]Stopped, error) {
	o = o.withDefaults()
	root, err := s.Resolve(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stop session tree: %w", err)
	}
	all, _, err := s.discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("stop session tree: %w", err)
	}
	byParent := map[string][]*Info{}
	for _, x := range all {
		if x.ParentID != "" {
			byParent[x.ParentID] = append(byParent[x.ParentID], x)
		}
	}
	var ordered []*Info
	seen := map[*Info]bool{}
	var visit func(x *Info)
	visit = func(x *Info) {
		if seen[x] {
			return
		}
		seen[x] = true
		ordered = append(ordered, x)
		for _, c := range byParent[x.ID] {
			visit(c)
		}
	}
	visit(root)
	now := s.now()
	var out []Stopped
	for _, x := range ordered {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("stop session tree: %w", err)
		}
		if x.Err != nil {
			continue // an unreadable session.json cannot be stopped
		}
		w, err := s.openDir(ctx, x.Dir)
		if err != nil {
			return out, fmt.Errorf("stop session tree: %w", err)
		}
		r, err := w.stopAt(o, now)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return out, fmt.Errorf("stop session tree: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ownPartFiles lists the part files of a session's own messages: every
// <dir>/<message>/part/*.json.
func (s *Store) ownPartFiles(dir string) ([]string, error) {
	fsys := s.fs()
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || e.Name() == layout.AgentUseSubagentDir {
			continue
		}
		pdir := filepath.Join(dir, e.Name(), layout.AgentUsePartDir)
		pents, err := fsys.ReadDir(pdir)
		if err != nil {
			continue
		}
		for _, p := range pents {
			if p.Type().IsRegular() && layout.IsAgentUseDataFile(p.Name()) {
				out = append(out, filepath.Join(pdir, p.Name()))
			}
		}
	}
	return out, nil
}

// ArtifactRef describes a written tool-output artifact, as
// AgentUse's tool outputs reference it.
type ArtifactRef struct {
	Kind          string // "tool-output"
	Path          string // relative to the store root, '/'-separated
	AbsolutePath  string
	Bytes         int64 // size of the file
	OriginalChars int64 // UTF-16 length of the output (of its JSON text for a non-string)
}

// SetArtifactAgentID sets the agentId written into tool-output artifacts.
// It defaults to the session's agent.id; AgentUse writes whatever agent id
// its runner passes, so a writer reproducing its files can match it.
func (w *Session) SetArtifactAgentID(agentID string) {
	w.mu.Lock()
	w.artifactAgentID = &agentID
	w.mu.Unlock()
}

// artifactAgent is the agentId of artifacts; w.mu is held.
func (w *Session) artifactAgent() string {
	if w.artifactAgentID != nil {
		return *w.artifactAgentID
	}
	return w.agentID
}

// artifactFile picks the path of a new artifact of the message.
func (w *Session) artifactFile(messageID, toolName, ext string) (string, string, error) {
	id, err := w.s.newID()
	if err != nil {
		return "", "", err
	}
	name, err := layout.AgentUseArtifactName(toolName, id, ext)
	if err != nil {
		return "", "", err
	}
	if err := layout.CheckAgentUseID(messageID); err != nil {
		return "", "", err
	}
	file := filepath.Join(w.dir, messageID, layout.AgentUseArtifactDir, name)
	rel, err := w.s.rel(file)
	if err != nil {
		return "", "", err
	}
	if err := w.s.ensureDir(filepath.Dir(file)); err != nil {
		return "", "", err
	}
	return file, filepath.ToSlash(rel), nil
}

// WriteToolOutput stores a tool's full output as a JSON artifact,
// <messageID>/artifact/tool-output-<tool>-<id>.json, holding {kind:
// "tool-output", toolName, createdAt, sessionID, agentId, messageID,
// output}, as AgentUse's writeToolOutputArtifact does.
func (w *Session) WriteToolOutput(messageID, toolName string, output any) (ArtifactRef, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return ArtifactRef{}, err
	}
	out, err := optionalJSON(output)
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("write tool output: %w", err)
	}
	file, rel, err := w.artifactFile(messageID, toolName, "json")
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("write tool output: %w", err)
	}
	b := jsonl.NewObject(len(out)+256).String("kind", "tool-output").String("toolName", toolName).
		Raw("createdAt", msJSON(w.s.now())).String("sessionID", w.id).String("agentId", w.artifactAgent()).
		String("messageID", messageID)
	if out != nil {
		b.Raw("output", out)
	}
	data, err := jsonl.Indent(nil, b.Bytes())
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("write tool output %s: %w", file, err)
	}
	if err := w.s.writeFile(file, data); err != nil {
		return ArtifactRef{}, fmt.Errorf("write tool output: %w", err)
	}
	var chars int64
	if s, ok := output.(string); ok {
		chars = utf16Len(s)
	} else if out != nil {
		ind, _ := jsonl.Indent(nil, out)
		chars = utf16Len(string(ind))
	}
	return ArtifactRef{Kind: "tool-output", Path: rel, AbsolutePath: file, Bytes: int64(len(data)), OriginalChars: chars}, nil
}

func utf16Len(s string) int64 { return int64(jsonl.UTF16Len(s)) }

// ArtifactStream receives a tool's streamed output into a
// temporary file; Finalize moves it into place, Discard drops it.
type ArtifactStream struct {
	w     *Session
	f     vfs.File
	tmp   string
	file  string
	rel   string
	bytes int64
	chars int64
	err   error
	mu    sync.Mutex
	done  bool
}

// CreateToolOutputStream starts a text artifact,
// <messageID>/artifact/tool-output-<tool>-<id>.txt, as AgentUse's
// createToolOutputArtifactStream does: a header ("# AgentUse Tool Output
// Artifact", kind, tool, createdAt as an ISO time, sessionID, agentId,
// messageID and, when metadata is a non-empty object, "metadata: " and
// its 2-space JSON), a blank line, then the bytes written to the stream.
func (w *Session) CreateToolOutputStream(messageID, toolName string, metadata any) (*ArtifactStream, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return nil, err
	}
	meta, err := optionalJSON(metadata)
	if err != nil {
		return nil, fmt.Errorf("create tool output stream: metadata: %w", err)
	}
	file, rel, err := w.artifactFile(messageID, toolName, "txt")
	if err != nil {
		return nil, fmt.Errorf("create tool output stream: %w", err)
	}
	header := []string{
		"# AgentUse Tool Output Artifact",
		"kind: tool-output",
		"tool: " + toolName,
		"createdAt: " + jsonl.ISOTime(w.s.now()),
		"sessionID: " + w.id,
		"agentId: " + w.artifactAgent(),
		"messageID: " + messageID,
	}
	if jsonl.KindOf(meta) == jsonl.KindObject && string(meta) != "{}" {
		ind, _ := jsonl.Indent(nil, meta)
		header = append(header, "metadata: "+string(ind))
	}
	header = append(header, "")
	tmp := vfs.TempName(file)
	f, err := w.s.fs().OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create tool output stream %s: %w", file, err)
	}
	st := &ArtifactStream{w: w, f: f, tmp: tmp, file: file, rel: rel}
	if _, err := st.Write([]byte(strings.Join(header, "\n") + "\n")); err != nil {
		_ = st.Discard()
		return nil, err
	}
	return st, nil
}

// Write appends p to the artifact. After an error every later Write and
// Finalize returns it.
func (st *ArtifactStream) Write(p []byte) (int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return 0, fmt.Errorf("write %s: stream already finalized or discarded", st.file)
	}
	if st.err != nil {
		return 0, st.err
	}
	n, err := st.f.Write(p)
	st.bytes += int64(n)
	st.chars += utf16Units(p[:n])
	if err != nil {
		st.err = fmt.Errorf("write %s: %w", st.tmp, err)
		return n, st.err
	}
	return n, nil
}

// utf16Units counts the UTF-16 code units of UTF-8 bytes without needing
// whole characters: one per leading byte, two for 4-byte sequences.
func utf16Units(p []byte) int64 {
	var n int64
	for _, c := range p {
		switch {
		case c < 0x80 || (c >= 0xC0 && c < 0xF0):
			n++
		case c >= 0xF0:
			n += 2
		}
	}
	return n
}

// Finalize closes the artifact and renames it into place (durably under
// SyncEach). It returns the artifact's reference; Bytes and OriginalChars
// count the header too, as AgentUse's do.
func (st *ArtifactStream) Finalize() (ArtifactRef, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return ArtifactRef{}, fmt.Errorf("finalize %s: stream already finalized or discarded", st.file)
	}
	st.done = true
	fsys := st.w.s.fs()
	err := st.err
	if err == nil && st.w.s.opts.Sync != SyncNone {
		if err = st.f.Sync(); err != nil {
			err = fmt.Errorf("sync %s: %w", st.tmp, err)
		}
	}
	if cerr := st.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", st.tmp, cerr)
	}
	if err == nil {
		if err = fsys.Rename(st.tmp, st.file); err != nil {
			err = fmt.Errorf("rename %s: %w", st.tmp, err)
		}
	}
	if err != nil {
		_ = fsys.Remove(st.tmp)
		return ArtifactRef{}, err
	}
	if st.w.s.opts.Sync != SyncNone {
		if err := fsys.SyncDir(filepath.Dir(st.file)); err != nil {
			return ArtifactRef{}, fmt.Errorf("sync directory %s: %w", filepath.Dir(st.file), err)
		}
	}
	return ArtifactRef{Kind: "tool-output", Path: st.rel, AbsolutePath: st.file, Bytes: st.bytes, OriginalChars: st.chars}, nil
}

// Discard drops the artifact and its temporary file.
func (st *ArtifactStream) Discard() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return nil
	}
	st.done = true
	_ = st.f.Close()
	if err := st.w.s.fs().Remove(st.tmp); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("discard %s: %w", st.tmp, err)
	}
	return nil
}
