package adk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/message"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// How an ADK event is kept in a pi session file. Its content becomes pi
// messages, so that pi, sessctl show and serve see the conversation: a
// model's content one assistant message (text, thinking and toolCall
// blocks, usage, stop reason), a user's text and images one user
// message, function responses one toolResult message each. The last of
// an event's messages carries the rest of the event, ADK's own JSON
// without its content, in the member "adk" (pi passes members it does not
// know through); the messages before it name the event in "adkPart".
// The content is left out of "adk" only when the messages give it back
// exactly (checked on every append); otherwise "adk" holds it too, and
// the messages are pi's view of it. An event without content (a state
// change, a transfer) is a custom entry of type customEvent, the event's
// JSON as its data.
const (
	customEvent   = "adk.event"   // a custom entry holding an event without content
	customSession = "adk.session" // the custom entry a session starts with
	memberEvent   = "adk"         // the member of a message holding its event
	memberPart    = "adkPart"     // the member of a message an event continues in
)

// sessionRecord is the data of a session's first custom entry: whose
// session it is and the session state it was created with.
type sessionRecord struct {
	AppName string         `json:"appName"`
	UserID  string         `json:"userId"`
	State   map[string]any `json:"state,omitempty"`
}

// piNames are the api, provider and default model written in assistant
// messages.
type piNames struct {
	api, provider, model string
}

// eventMessages returns the pi messages an event's content becomes and
// the event's JSON to keep beside them; no messages means the event is
// kept as a custom entry.
func eventMessages(ev *session.Event, names piNames, now time.Time) ([]message.Message, []byte, error) {
	full, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	c := ev.Content
	if c == nil || len(c.Parts) == 0 {
		return nil, full, nil
	}
	at := ev.Timestamp
	if at.IsZero() {
		at = now
	}
	msgs := contentMessages(ev, names, at)
	if len(msgs) == 0 {
		return nil, full, nil
	}
	rebuilt, err := messagesContent(roundTrip(msgs))
	if err == nil {
		a, err1 := json.Marshal(c)
		b, err2 := json.Marshal(rebuilt)
		if err1 == nil && err2 == nil && bytes.Equal(a, b) {
			lean := *ev
			lean.Content = nil
			if full, err = json.Marshal(&lean); err != nil {
				return nil, nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
			}
		}
	}
	for _, m := range msgs[:len(msgs)-1] {
		id, _ := json.Marshal(ev.ID)
		fieldsOf(m).SetExtra(memberPart, id)
	}
	fieldsOf(msgs[len(msgs)-1]).SetExtra(memberEvent, full)
	return msgs, full, nil
}

// contentMessages maps the parts pi has blocks for; what it has none for
// (code execution, files by URI, video metadata, ...) is left to the
// event's JSON.
func contentMessages(ev *session.Event, names piNames, at time.Time) []message.Message {
	c := ev.Content
	switch c.Role {
	case genai.RoleModel:
		var blocks []message.Block
		calls := false
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				tc := message.NewToolCall(p.FunctionCall.ID, p.FunctionCall.Name, p.FunctionCall.Args)
				if tc.Arguments == nil {
					tc.Arguments = map[string]any{}
				}
				tc.ThoughtSignature = b64(p.ThoughtSignature)
				blocks = append(blocks, tc)
				calls = true
			case p.Thought:
				th := message.NewThinking(p.Text)
				th.ThinkingSignature = b64(p.ThoughtSignature)
				blocks = append(blocks, th)
			case p.Text != "":
				t := message.NewText(p.Text)
				t.TextSignature = b64(p.ThoughtSignature)
				blocks = append(blocks, t)
			}
		}
		if len(blocks) == 0 {
			return nil
		}
		model := ev.ModelVersion
		if model == "" {
			model = names.model
		}
		stop := message.StopStop
		switch {
		case ev.ErrorCode != "" || ev.ErrorMessage != "":
			stop = message.StopError
		case calls:
			stop = message.StopToolUse
		case ev.FinishReason == genai.FinishReasonMaxTokens:
			stop = message.StopLength
		}
		a := message.NewAssistant(names.api, names.provider, model, blocks, usage(ev.UsageMetadata), stop, at)
		if stop == message.StopError {
			a.ErrorMessage = ev.ErrorMessage
			if a.ErrorMessage == "" {
				a.ErrorMessage = ev.ErrorCode
			}
		}
		return []message.Message{a}
	case genai.RoleUser:
		var results []message.Message
		var blocks []message.Block
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				text, _ := json.Marshal(fr.Response)
				_, isErr := fr.Response["error"]
				r := message.NewToolResult(fr.ID, fr.Name, []message.Block{message.NewText(string(text))}, isErr, at)
				r.Details = fr.Response
				results = append(results, r)
			case p.InlineData != nil && len(p.InlineData.MIMEType) > 6 && p.InlineData.MIMEType[:6] == "image/":
				blocks = append(blocks, message.NewImage(base64.StdEncoding.EncodeToString(p.InlineData.Data), p.InlineData.MIMEType))
			case p.Text != "" && !p.Thought:
				blocks = append(blocks, message.NewText(p.Text))
			}
		}
		if len(blocks) > 0 {
			results = append(results, message.NewUserBlocks(at, blocks...))
		}
		return results
	}
	return nil
}

// messagesContent gives back the content the messages of one event hold.
func messagesContent(msgs []message.Message) (*genai.Content, error) {
	c := &genai.Content{}
	for _, m := range msgs {
		switch m := m.(type) {
		case *message.Assistant:
			c.Role = genai.RoleModel
			for _, b := range m.Content {
				switch b := b.(type) {
				case *message.TextContent:
					sig, err := unb64(b.TextSignature)
					if err != nil {
						return nil, err
					}
					c.Parts = append(c.Parts, &genai.Part{Text: b.Text, ThoughtSignature: sig})
				case *message.ThinkingContent:
					sig, err := unb64(b.ThinkingSignature)
					if err != nil {
						return nil, err
					}
					c.Parts = append(c.Parts, &genai.Part{Text: b.Thinking, Thought: true, ThoughtSignature: sig})
				case *message.ToolCall:
					sig, err := unb64(b.ThoughtSignature)
					if err != nil {
						return nil, err
					}
					var args map[string]any
					if err := remarshal(b.Arguments, &args); err != nil {
						return nil, err
					}
					if len(args) == 0 {
						args = nil
					}
					c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args}, ThoughtSignature: sig})
				default:
					return nil, fmt.Errorf("assistant block %q has no part", b.BlockType())
				}
			}
		case *message.User:
			c.Role = genai.RoleUser
			if m.Content.IsString() {
				c.Parts = append(c.Parts, &genai.Part{Text: m.Content.Text})
				continue
			}
			for _, b := range m.Content.Blocks {
				switch b := b.(type) {
				case *message.TextContent:
					c.Parts = append(c.Parts, &genai.Part{Text: b.Text})
				case *message.ImageContent:
					data, err := base64.StdEncoding.DecodeString(b.Data)
					if err != nil {
						return nil, err
					}
					c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: b.MimeType}})
				default:
					return nil, fmt.Errorf("user block %q has no part", b.BlockType())
				}
			}
		case *message.ToolResult:
			c.Role = genai.RoleUser
			var resp map[string]any
			if err := remarshal(m.Details, &resp); err != nil {
				return nil, err
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: m.ToolName, Response: resp}})
		default:
			return nil, fmt.Errorf("message role %q has no content", m.Role())
		}
	}
	return c, nil
}

// usage maps Gemini's token counts the way pi-ai's google provider does:
// input excludes the cached prompt tokens, output includes the thoughts.
func usage(u *genai.GenerateContentResponseUsageMetadata) message.Usage {
	if u == nil {
		return message.Usage{}
	}
	cached := int64(u.CachedContentTokenCount)
	in := int64(u.PromptTokenCount) - cached
	out := int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)
	us := message.NewUsage(in, out, cached, 0, message.Cost{})
	if u.TotalTokenCount != 0 {
		us.TotalTokens = int64(u.TotalTokenCount)
	}
	return us
}

// roundTrip returns the messages as they read back from a session file:
// encoded as a line holds them and decoded again. The check that the
// messages give the content back is made on what Get will read.
func roundTrip(msgs []message.Message) []message.Message {
	out := make([]message.Message, 0, len(msgs))
	for _, m := range msgs {
		raw, err := message.Encode(m)
		if err != nil {
			return nil
		}
		d, err := message.Decode(raw)
		if err != nil {
			return nil
		}
		out = append(out, d)
	}
	return out
}

// fieldsOf returns the members beyond a message's Go fields.
func fieldsOf(m message.Message) *message.Fields {
	switch m := m.(type) {
	case *message.Assistant:
		return &m.Fields
	case *message.User:
		return &m.Fields
	case *message.ToolResult:
		return &m.Fields
	}
	panic(fmt.Sprintf("adk: no fields for message %T", m))
}

// extraOf returns a member of a decoded message beyond its Go fields.
func extraOf(m message.Message, key string) (json.RawMessage, bool) {
	switch m := m.(type) {
	case *message.Assistant:
		return m.Extra(key)
	case *message.User:
		return m.Extra(key)
	case *message.ToolResult:
		return m.Extra(key)
	}
	return nil, false
}

func b64(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

func unb64(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	return base64.StdEncoding.DecodeString(s)
}

// remarshal decodes v (a json.RawMessage as decoding gives, or a Go
// value) into dst.
func remarshal(v any, dst any) error {
	if v == nil {
		return nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return json.Unmarshal(raw, dst)
}
