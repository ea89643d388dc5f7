package message

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Message is one message object: *User, *Assistant, *ToolResult,
// *BashExecution, *Custom, *BranchSummary, *CompactionSummary, or
// *Unknown for any other role (kept as read).
type Message interface {
	// Role returns the message's "role".
	Role() string
	json.Marshaler
	appendJSON(dst []byte) ([]byte, error)
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
// model, usage, stopReason, errorMessage?, timestamp}.
type Assistant struct {
	Content      []Block // text, thinking and toolCall blocks
	API          string  // "anthropic-messages", "openai-responses", ...
	Provider     string
	Model        string
	Usage        Usage
	StopReason   StopReason
	ErrorMessage string // optional
	Timestamp    int64
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

// Role returns the "role" member when it is a string, else "".
func (m *Unknown) Role() string {
	v, _ := jsonl.Lookup(m.Raw, "role")
	s, _ := jsonl.String(v)
	return s
}

func roleField(r string) field {
	f := typeField(r)
	f.key = "role"
	return f
}

func (m *User) fields() []field {
	return []field{roleField(RoleUser), contentField("content", &m.Content), intField("timestamp", &m.Timestamp, true)}
}

func (m *Assistant) fields() []field {
	stop := (*string)(&m.StopReason)
	return []field{roleField(RoleAssistant), blocksField("content", &m.Content),
		strField("api", &m.API, true), strField("provider", &m.Provider, true), strField("model", &m.Model, true),
		objField("usage", &m.Usage, &m.Usage.Fields, m.Usage.fields),
		strField("stopReason", stop, true), strField("errorMessage", &m.ErrorMessage, false),
		intField("timestamp", &m.Timestamp, true)}
}

func (u *Usage) fields() []field {
	return []field{intField("input", &u.Input, true), intField("output", &u.Output, true),
		intField("cacheRead", &u.CacheRead, true), intField("cacheWrite", &u.CacheWrite, true),
		intField("totalTokens", &u.TotalTokens, true),
		objField("cost", &u.Cost, &u.Cost.Fields, u.Cost.fields)}
}

func (c *Cost) fields() []field {
	return []field{floatField("input", &c.Input, true), floatField("output", &c.Output, true),
		floatField("cacheRead", &c.CacheRead, true), floatField("cacheWrite", &c.CacheWrite, true),
		floatField("total", &c.Total, true)}
}

func (m *ToolResult) fields() []field {
	return []field{roleField(RoleToolResult), strField("toolCallId", &m.ToolCallID, true), strField("toolName", &m.ToolName, true),
		blocksField("content", &m.Content), anyField("details", &m.Details, false, ""),
		boolField("isError", &m.IsError, true), intField("timestamp", &m.Timestamp, true)}
}

func (m *BashExecution) fields() []field {
	exit := intField("exitCode", &m.ExitCode, false)
	exit.zero = !m.HasExitCode
	dec := exit.dec
	exit.dec = func(v []byte) bool {
		m.HasExitCode = dec(v)
		return m.HasExitCode
	}
	return []field{roleField(RoleBashExecution), strField("command", &m.Command, true), strField("output", &m.Output, true),
		exit, boolField("cancelled", &m.Cancelled, true), boolField("truncated", &m.Truncated, true),
		strField("fullOutputPath", &m.FullOutputPath, false), intField("timestamp", &m.Timestamp, true),
		boolField("excludeFromContext", &m.ExcludeFromContext, false)}
}

func (m *Custom) fields() []field {
	return []field{roleField(RoleCustom), strField("customType", &m.CustomType, true), contentField("content", &m.Content),
		boolField("display", &m.Display, true), anyField("details", &m.Details, false, ""),
		intField("timestamp", &m.Timestamp, true)}
}

func (m *BranchSummary) fields() []field {
	return []field{roleField(RoleBranchSummary), strField("summary", &m.Summary, true), strField("fromId", &m.FromID, true),
		intField("timestamp", &m.Timestamp, true)}
}

func (m *CompactionSummary) fields() []field {
	return []field{roleField(RoleCompactionSummary), strField("summary", &m.Summary, true),
		floatField("tokensBefore", &m.TokensBefore, true), intField("timestamp", &m.Timestamp, true)}
}

// objField is a nested object member.
func objField(key string, _ any, f *Fields, fields func() []field) field {
	fs := fields()
	zero := !f.decoded() && len(f.extra) == 0
	for _, x := range fs {
		zero = zero && x.zero
	}
	return field{key: key, required: true, zero: zero,
		enc: func(dst []byte) ([]byte, error) { return encodeObject(dst, fs, f) },
		dec: func(v []byte) bool { return decodeObject(v, fs, f) == nil }}
}

func (m *User) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *Assistant) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *ToolResult) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *BashExecution) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *Custom) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *BranchSummary) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *CompactionSummary) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, m.fields(), &m.Fields)
}
func (m *Unknown) appendJSON(dst []byte) ([]byte, error) { return jsonl.Canonical(dst, m.Raw) }

// MarshalJSON returns Encode(m).
func (m *User) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *Assistant) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *ToolResult) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *BashExecution) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *Custom) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *BranchSummary) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *CompactionSummary) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// MarshalJSON returns Encode(m).
func (m *Unknown) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

// Encode returns the bytes JSON.stringify writes for the message.
func Encode(m Message) ([]byte, error) {
	b, err := m.appendJSON(nil)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Role(), err)
	}
	return b, nil
}

// Decode decodes a message object. A role this package does not know (or
// none) gives *Unknown. It fails only when raw is not a JSON object.
func Decode(raw []byte) (Message, error) {
	if jsonl.KindOf(raw) != jsonl.KindObject || !jsonl.Valid(raw) {
		return nil, fmt.Errorf("decode message: %w: not a JSON object", jsonl.ErrSyntax)
	}
	v, _ := jsonl.Lookup(raw, "role")
	role, _ := jsonl.String(v)
	var m interface {
		Message
		fields() []field
		base() *Fields
	}
	switch role {
	case RoleUser:
		m = &User{}
	case RoleAssistant:
		m = &Assistant{}
	case RoleToolResult:
		m = &ToolResult{}
	case RoleBashExecution:
		m = &BashExecution{}
	case RoleCustom:
		m = &Custom{}
	case RoleBranchSummary:
		m = &BranchSummary{}
	case RoleCompactionSummary:
		m = &CompactionSummary{}
	default:
		return &Unknown{Raw: slices.Clone(raw)}, nil
	}
	if err := decodeObject(raw, m.fields(), m.base()); err != nil {
		return nil, err
	}
	return m, nil
}
