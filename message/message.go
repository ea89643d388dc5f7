package message

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Message is one message object: *User, *Assistant, *ToolResult,
// *BashExecution, *Custom, *BranchSummary, *CompactionSummary, *System,
// or *Unknown for any other role (kept as read).
type Message interface {
	// Role returns the message's "role".
	Role() string
	json.Marshaler
	// appendJSON appends Encode's bytes, with canon AppendJSON's.
	appendJSON(dst []byte, canon bool) ([]byte, error)
}

// The roles of the message types.
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	RoleSystem            = "system"
)

// StopReason says why an assistant message ended.
type StopReason string

// pi-ai's stop reasons.
const (
	StopStop    StopReason = "stop"
	StopLength  StopReason = "length"
	StopToolUse StopReason = "toolUse"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
)

// Millis returns t as epoch milliseconds, the form of a message's
// timestamp (JavaScript's Date.now()).
func Millis(t time.Time) int64 { return t.UnixMilli() }

// User is pi-ai's user message: {role, content, timestamp}.
type User struct {
	Content   Content
	Timestamp int64 // epoch milliseconds
	Fields
}

// Assistant is pi-ai's assistant message: {role, content, api, provider,
// model, responseModel?, responseId?, diagnostics?, usage, stopReason,
// errorMessage?, timestamp}. API and Provider are open sets: pi-ai adds
// new ones with its releases.
type Assistant struct {
	Content  []Block // text, thinking and toolCall blocks
	API      string  // "anthropic-messages", "openai-responses", "openai-completions", ...
	Provider string
	Model    string
	// ResponseModel is the model the provider reports having answered
	// with, when it is not Model (pi-ai 0.73; optional).
	ResponseModel string
	// ResponseID is the provider's id of the response (pi-ai 0.73;
	// optional).
	ResponseID string
	// Diagnostics are what went wrong on the way to the answer, such as
	// a transport failure that was retried (pi-ai 0.73; optional).
	Diagnostics  []Diagnostic
	Usage        Usage
	StopReason   StopReason
	ErrorMessage string // optional
	Timestamp    int64
	Fields
}

// Diagnostic is one of an assistant message's diagnostics (pi-ai's
// AssistantMessageDiagnostic): {type, timestamp, error, details?}.
type Diagnostic struct {
	Type      string // "provider_transport_failure", ...
	Timestamp int64  // epoch milliseconds
	Error     DiagnosticError
	Details   any // any JSON value (nil: absent); decoding gives json.RawMessage
	Fields
}

// DiagnosticError is the error a Diagnostic records: {name?, message,
// stack?, code?}. Code is a string or a number (nil: absent); decoding
// gives json.RawMessage.
type DiagnosticError struct {
	Name    string // optional
	Message string
	Stack   string // optional
	Code    any
	Fields
}

// Usage is an assistant message's token usage and cost.
type Usage struct {
	Input       int64
	Output      int64
	CacheRead   int64
	CacheWrite  int64
	TotalTokens int64 // old files lack it
	Cost        Cost
	Fields
}

// Add adds the counts and costs of o to u (a sum over messages, as
// engine/stats counts them); u's unknown members stay as they are.
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
	u.Cost.Input += o.Cost.Input
	u.Cost.Output += o.Cost.Output
	u.Cost.CacheRead += o.Cost.CacheRead
	u.Cost.CacheWrite += o.Cost.CacheWrite
	u.Cost.Total += o.Cost.Total
}

// Cost is the cost of an assistant message, in dollars.
type Cost struct {
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
	Total      float64
	Fields
}

// ToolResult is pi-ai's tool result message: {role, toolCallId,
// toolName, content, details?, isError, timestamp}. Details is any value
// (nil: absent); decoding gives json.RawMessage.
type ToolResult struct {
	ToolCallID string
	ToolName   string
	Content    []Block // text and image blocks
	Details    any
	IsError    bool
	Timestamp  int64
	Fields
}

// BashExecution is pi's message for a command the user ran with !cmd:
// {role, command, output, exitCode, cancelled, truncated,
// fullOutputPath?, timestamp, excludeFromContext?}. exitCode is written
// only when HasExitCode (pi leaves it out for a cancelled command).
type BashExecution struct {
	Command            string
	Output             string
	ExitCode           int64
	HasExitCode        bool
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string // optional
	Timestamp          int64
	ExcludeFromContext bool // optional
	Fields
}

// Custom is pi's custom message: {role, customType, content, display,
// details?, timestamp}. pi writes it as a custom_message entry (see
// engine.Session.AppendCustomMessage); a message entry may hold one too.
type Custom struct {
	CustomType string
	Content    Content
	Display    bool
	Details    any
	Timestamp  int64
	Fields
}

// BranchSummary is the message a branch_summary entry becomes in a
// context: {role, summary, fromId, timestamp}.
type BranchSummary struct {
	Summary   string
	FromID    string
	Timestamp int64
	Fields
}

// CompactionSummary is the message a compaction becomes in a context:
// {role, summary, tokensBefore, timestamp}.
type CompactionSummary struct {
	Summary      string
	TokensBefore float64
	Timestamp    int64
	Fields
}

// System is pi-ai 1.x's system message: {role, content, sections?,
// toolsAdded?, toolsRemoved?, timestamp}: instructions that take effect
// where they stand in the conversation (a mid-conversation system
// message). The first one holds the base prompt; a later one adds its
// Content, patches Sections by name (a null value removes one) and adds
// or removes tools. A compaction carries them replayed into one, its
// systemMessage checkpoint, and keeps no system message of the entries
// it keeps. Sections ({name: text or null}), ToolsAdded (tool
// definitions) and ToolsRemoved ([{name}]) are any JSON values; nil
// leaves them out.
type System struct {
	Content      Content
	Sections     any
	ToolsAdded   any
	ToolsRemoved any
	Timestamp    int64
	Fields
}

// NewSystem returns a system message with string content.
func NewSystem(text string, at time.Time) *System {
	return &System{Content: Text(text), Timestamp: Millis(at)}
}

// Unknown is a message of a role this package does not know, kept as its
// JSON.
type Unknown struct {
	Raw json.RawMessage
}

// NewUser returns a user message with string content.
func NewUser(text string, at time.Time) *User {
	return &User{Content: Text(text), Timestamp: Millis(at)}
}

// NewUserBlocks returns a user message with text and image blocks.
func NewUserBlocks(at time.Time, blocks ...Block) *User {
	return &User{Content: Blocks(blocks...), Timestamp: Millis(at)}
}

// NewAssistant returns an assistant message of model (provider and id)
// through api, with the given content, usage and stop reason.
func NewAssistant(api, provider, model string, content []Block, usage Usage, stop StopReason, at time.Time) *Assistant {
	if content == nil {
		content = []Block{}
	}
	return &Assistant{Content: content, API: api, Provider: provider, Model: model, Usage: usage, StopReason: stop, Timestamp: Millis(at)}
}

// NewUsage returns token counts with TotalTokens their sum, and the cost.
func NewUsage(input, output, cacheRead, cacheWrite int64, cost Cost) Usage {
	return Usage{Input: input, Output: output, CacheRead: cacheRead, CacheWrite: cacheWrite,
		TotalTokens: input + output + cacheRead + cacheWrite, Cost: cost}
}

// NewToolResult returns a tool result for the call callID of toolName.
func NewToolResult(callID, toolName string, content []Block, isError bool, at time.Time) *ToolResult {
	if content == nil {
		content = []Block{}
	}
	return &ToolResult{ToolCallID: callID, ToolName: toolName, Content: content, IsError: isError, Timestamp: Millis(at)}
}

// NewBashExecution returns a finished command's message with its exit
// code.
func NewBashExecution(command, output string, exitCode int64, at time.Time) *BashExecution {
	return &BashExecution{Command: command, Output: output, ExitCode: exitCode, HasExitCode: true, Timestamp: Millis(at)}
}

// NewCustom returns a custom message.
func NewCustom(customType string, content Content, display bool, at time.Time) *Custom {
	return &Custom{CustomType: customType, Content: content, Display: display, Timestamp: Millis(at)}
}

// Role returns "user".
func (*User) Role() string { return RoleUser }

// Role returns "assistant".
func (*Assistant) Role() string { return RoleAssistant }

// Role returns "toolResult".
func (*ToolResult) Role() string { return RoleToolResult }

// Role returns "bashExecution".
func (*BashExecution) Role() string { return RoleBashExecution }

// Role returns "custom".
func (*Custom) Role() string { return RoleCustom }

// Role returns "branchSummary".
func (*BranchSummary) Role() string { return RoleBranchSummary }

// Role returns "compactionSummary".
func (*CompactionSummary) Role() string { return RoleCompactionSummary }

// Role returns "system".
func (*System) Role() string { return RoleSystem }

// Role returns the "role" member when it is a string, else "".
func (m *Unknown) Role() string {
	v, _ := jsonl.Lookup(m.Raw, "role")
	s, _ := jsonl.String(v)
	return s
}

// The field tables of the message types, in pi's order.
var (
	userFields = []field[User]{
		constField[User]("role", RoleUser),
		contentField("content", func(m *User) *Content { return &m.Content }),
		intField("timestamp", true, func(m *User) *int64 { return &m.Timestamp }),
	}
	assistantFields = []field[Assistant]{
		constField[Assistant]("role", RoleAssistant),
		blocksField("content", func(m *Assistant) *[]Block { return &m.Content }),
		strField("api", true, func(m *Assistant) *string { return &m.API }),
		strField("provider", true, func(m *Assistant) *string { return &m.Provider }),
		strField("model", true, func(m *Assistant) *string { return &m.Model }),
		strField("responseModel", false, func(m *Assistant) *string { return &m.ResponseModel }),
		strField("responseId", false, func(m *Assistant) *string { return &m.ResponseID }),
		objSliceField("diagnostics", func(m *Assistant) *[]Diagnostic { return &m.Diagnostics }, diagnosticFields, (*Diagnostic).base),
		objField("usage", func(m *Assistant) *Usage { return &m.Usage }, usageFields, (*Usage).base),
		strField("stopReason", true, func(m *Assistant) *string { return (*string)(&m.StopReason) }),
		strField("errorMessage", false, func(m *Assistant) *string { return &m.ErrorMessage }),
		intField("timestamp", true, func(m *Assistant) *int64 { return &m.Timestamp }),
	}
	diagnosticFields = []field[Diagnostic]{
		strField("type", true, func(d *Diagnostic) *string { return &d.Type }),
		intField("timestamp", true, func(d *Diagnostic) *int64 { return &d.Timestamp }),
		objField("error", func(d *Diagnostic) *DiagnosticError { return &d.Error }, diagnosticErrorFields, (*DiagnosticError).base),
		anyField("details", false, "", func(d *Diagnostic) *any { return &d.Details }),
	}
	diagnosticErrorFields = []field[DiagnosticError]{
		strField("name", false, func(e *DiagnosticError) *string { return &e.Name }),
		strField("message", true, func(e *DiagnosticError) *string { return &e.Message }),
		strField("stack", false, func(e *DiagnosticError) *string { return &e.Stack }),
		anyField("code", false, "", func(e *DiagnosticError) *any { return &e.Code }),
	}
	usageFields = []field[Usage]{
		intField("input", true, func(u *Usage) *int64 { return &u.Input }),
		intField("output", true, func(u *Usage) *int64 { return &u.Output }),
		intField("cacheRead", true, func(u *Usage) *int64 { return &u.CacheRead }),
		intField("cacheWrite", true, func(u *Usage) *int64 { return &u.CacheWrite }),
		intField("totalTokens", true, func(u *Usage) *int64 { return &u.TotalTokens }),
		objField("cost", func(u *Usage) *Cost { return &u.Cost }, costFields, (*Cost).base),
	}
	costFields = []field[Cost]{
		floatField("input", true, func(c *Cost) *float64 { return &c.Input }),
		floatField("output", true, func(c *Cost) *float64 { return &c.Output }),
		floatField("cacheRead", true, func(c *Cost) *float64 { return &c.CacheRead }),
		floatField("cacheWrite", true, func(c *Cost) *float64 { return &c.CacheWrite }),
		floatField("total", true, func(c *Cost) *float64 { return &c.Total }),
	}
	toolResultFields = []field[ToolResult]{
		constField[ToolResult]("role", RoleToolResult),
		strField("toolCallId", true, func(m *ToolResult) *string { return &m.ToolCallID }),
		strField("toolName", true, func(m *ToolResult) *string { return &m.ToolName }),
		blocksField("content", func(m *ToolResult) *[]Block { return &m.Content }),
		anyField("details", false, "", func(m *ToolResult) *any { return &m.Details }),
		boolField("isError", true, func(m *ToolResult) *bool { return &m.IsError }),
		intField("timestamp", true, func(m *ToolResult) *int64 { return &m.Timestamp }),
	}
	bashExecutionFields = []field[BashExecution]{
		constField[BashExecution]("role", RoleBashExecution),
		strField("command", true, func(m *BashExecution) *string { return &m.Command }),
		strField("output", true, func(m *BashExecution) *string { return &m.Output }),
		exitCodeField,
		boolField("cancelled", true, func(m *BashExecution) *bool { return &m.Cancelled }),
		boolField("truncated", true, func(m *BashExecution) *bool { return &m.Truncated }),
		strField("fullOutputPath", false, func(m *BashExecution) *string { return &m.FullOutputPath }),
		intField("timestamp", true, func(m *BashExecution) *int64 { return &m.Timestamp }),
		boolField("excludeFromContext", false, func(m *BashExecution) *bool { return &m.ExcludeFromContext }),
	}
	customFields = []field[Custom]{
		constField[Custom]("role", RoleCustom),
		strField("customType", true, func(m *Custom) *string { return &m.CustomType }),
		contentField("content", func(m *Custom) *Content { return &m.Content }),
		boolField("display", true, func(m *Custom) *bool { return &m.Display }),
		anyField("details", false, "", func(m *Custom) *any { return &m.Details }),
		intField("timestamp", true, func(m *Custom) *int64 { return &m.Timestamp }),
	}
	branchSummaryFields = []field[BranchSummary]{
		constField[BranchSummary]("role", RoleBranchSummary),
		strField("summary", true, func(m *BranchSummary) *string { return &m.Summary }),
		strField("fromId", true, func(m *BranchSummary) *string { return &m.FromID }),
		intField("timestamp", true, func(m *BranchSummary) *int64 { return &m.Timestamp }),
	}
	compactionSummaryFields = []field[CompactionSummary]{
		constField[CompactionSummary]("role", RoleCompactionSummary),
		strField("summary", true, func(m *CompactionSummary) *string { return &m.Summary }),
		floatField("tokensBefore", true, func(m *CompactionSummary) *float64 { return &m.TokensBefore }),
		intField("timestamp", true, func(m *CompactionSummary) *int64 { return &m.Timestamp }),
	}
	systemFields = []field[System]{
		constField[System]("role", RoleSystem),
		contentField("content", func(m *System) *Content { return &m.Content }),
		anyField("sections", false, "", func(m *System) *any { return &m.Sections }),
		anyField("toolsAdded", false, "", func(m *System) *any { return &m.ToolsAdded }),
		anyField("toolsRemoved", false, "", func(m *System) *any { return &m.ToolsRemoved }),
		intField("timestamp", true, func(m *System) *int64 { return &m.Timestamp }),
	}
)

// exitCodeField is bashExecution's exitCode: written when HasExitCode,
// which decoding sets when the member is an integer.
var exitCodeField = field[BashExecution]{key: "exitCode", member: memberOf("exitCode"),
	zero: func(m *BashExecution) bool { return !m.HasExitCode },
	enc: func(dst []byte, m *BashExecution, _ bool) ([]byte, error) {
		return appendInt(dst, m.ExitCode), nil
	},
	dec: func(m *BashExecution, v []byte) bool {
		x, ok := decodeInt(v)
		if ok {
			m.ExitCode = x
		}
		m.HasExitCode = ok
		return ok
	}}

func (m *User) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, userFields, &m.Fields, canon)
}
func (m *Assistant) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, assistantFields, &m.Fields, canon)
}
func (m *ToolResult) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, toolResultFields, &m.Fields, canon)
}
func (m *BashExecution) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, bashExecutionFields, &m.Fields, canon)
}
func (m *Custom) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, customFields, &m.Fields, canon)
}
func (m *BranchSummary) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, branchSummaryFields, &m.Fields, canon)
}
func (m *CompactionSummary) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, compactionSummaryFields, &m.Fields, canon)
}
func (m *System) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, m, systemFields, &m.Fields, canon)
}
func (m *Unknown) appendJSON(dst []byte, _ bool) ([]byte, error) { return jsonl.Canonical(dst, m.Raw) }

// MarshalJSON returns Encode(m).
func (m *User) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *Assistant) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *ToolResult) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *BashExecution) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *Custom) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *BranchSummary) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *CompactionSummary) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns the usage object as pi-ai writes it (input, output,
// cacheRead, cacheWrite, totalTokens, cost), for the places that hold
// one outside a message: usage entries, compactions and branch summaries
// (engine.Session.AppendUsage, ...).
func (u Usage) MarshalJSON() ([]byte, error) {
	return encodeObject(nil, &u, usageFields, &u.Fields, false)
}

// MarshalJSON returns Encode(m).
func (m *System) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// MarshalJSON returns Encode(m).
func (m *Unknown) MarshalJSON() ([]byte, error) { return m.appendJSON(nil, false) }

// Encode returns the bytes JSON.stringify writes for the message.
func Encode(m Message) ([]byte, error) {
	b, err := m.appendJSON(nil, false)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Role(), err)
	}
	return b, nil
}

// AppendJSON appends the message to dst as an entry line holds it:
// Encode(m) as JSON.stringify(JSON.parse(...)) writes it (the same bytes,
// except where keys that are not UTF-8 meet), in one pass. This is what
// engine.Session.AppendMessage writes. It allocates nothing for
// the members of the message types (values such as tool-call arguments go
// through encoding/json when they are not JSON text). On error, dst is
// returned as given (its spare capacity may have been written).
func AppendJSON(dst []byte, m Message) ([]byte, error) {
	out, err := m.appendJSON(dst, true)
	if err != nil {
		return dst, fmt.Errorf("encode %s message: %w", m.Role(), err)
	}
	return out, nil
}

// Decode decodes a message object. A role this package does not know (or
// none) gives *Unknown. It fails only when raw is not a JSON object.
func Decode(raw []byte) (Message, error) {
	if jsonl.KindOf(raw) != jsonl.KindObject || !jsonl.Valid(raw) {
		return nil, fmt.Errorf("decode message: %w: not a JSON object", jsonl.ErrSyntax)
	}
	v, _ := jsonl.Lookup(raw, "role")
	role, _ := jsonl.String(v)
	switch role {
	case RoleUser:
		return decodeAs(raw, userFields, (*User).base)
	case RoleAssistant:
		return decodeAs(raw, assistantFields, (*Assistant).base)
	case RoleToolResult:
		return decodeAs(raw, toolResultFields, (*ToolResult).base)
	case RoleBashExecution:
		return decodeAs(raw, bashExecutionFields, (*BashExecution).base)
	case RoleCustom:
		return decodeAs(raw, customFields, (*Custom).base)
	case RoleBranchSummary:
		return decodeAs(raw, branchSummaryFields, (*BranchSummary).base)
	case RoleCompactionSummary:
		return decodeAs(raw, compactionSummaryFields, (*CompactionSummary).base)
	case RoleSystem:
		return decodeAs(raw, systemFields, (*System).base)
	}
	return &Unknown{Raw: slices.Clone(raw)}, nil
}

// decodeAs decodes raw into a new message of type T.
func decodeAs[T any, PT interface {
	*T
	Message
}](raw []byte, fs []field[T], base func(PT) *Fields) (Message, error) {
	m := PT(new(T))
	if err := decodeObject(raw, (*T)(m), fs, base(m)); err != nil {
		return nil, err
	}
	return m, nil
}
