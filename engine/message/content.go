package message

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Block is one content block of a message: *TextContent, *ImageContent,
// *ThinkingContent, *ToolCall, or *UnknownBlock for a block of another
// type (kept as read).
type Block interface {
	// BlockType returns the block's "type" member.
	BlockType() string
	appendJSON(dst []byte) ([]byte, error)
}

// TextContent is pi-ai's text block: {type:"text", text, textSignature?}.
type TextContent struct {
	Text          string
	TextSignature string // optional
	Fields
}

// ImageContent is pi-ai's image block: {type:"image", data, mimeType},
// data being the image in base64.
type ImageContent struct {
	Data     string
	MimeType string
	Fields
}

// ThinkingContent is pi-ai's thinking block: {type:"thinking", thinking,
// thinkingSignature?, redacted?}.
type ThinkingContent struct {
	Thinking          string
	ThinkingSignature string // optional
	Redacted          bool   // optional
	Fields
}

// ToolCall is pi-ai's tool call block: {type:"toolCall", id, name,
// arguments, thoughtSignature?}. Arguments is any value JSON.stringify
// would write as an object: a struct, a map (encoding/json sorts its
// keys), or json.RawMessage, which is what decoding gives. nil writes {}.
type ToolCall struct {
	ID               string
	Name             string
	Arguments        any
	ThoughtSignature string // optional
	Fields
}

// UnknownBlock is a content block of a type this package does not know
// (or not an object at all), kept as its JSON.
type UnknownBlock struct {
	Raw json.RawMessage
}

// NewText returns a text block.
func NewText(text string) *TextContent { return &TextContent{Text: text} }

// NewImage returns an image block from base64 data.
func NewImage(base64Data, mimeType string) *ImageContent {
	return &ImageContent{Data: base64Data, MimeType: mimeType}
}

// NewThinking returns a thinking block.
func NewThinking(thinking string) *ThinkingContent { return &ThinkingContent{Thinking: thinking} }

// NewToolCall returns a tool call block.
func NewToolCall(id, name string, arguments any) *ToolCall {
	return &ToolCall{ID: id, Name: name, Arguments: arguments}
}

// BlockType returns "text".
func (*TextContent) BlockType() string { return "text" }

// BlockType returns "image".
func (*ImageContent) BlockType() string { return "image" }

// BlockType returns "thinking".
func (*ThinkingContent) BlockType() string { return "thinking" }

// BlockType returns "toolCall".
func (*ToolCall) BlockType() string { return "toolCall" }

// BlockType returns the block's "type" when it is a string, else "".
func (b *UnknownBlock) BlockType() string {
	v, _ := jsonl.Lookup(b.Raw, "type")
	s, _ := jsonl.String(v)
	return s
}

func typeField(t string) field {
	return field{key: "type", required: true,
		enc: func(dst []byte) ([]byte, error) { return jsonl.AppendString(dst, t), nil },
		dec: func(v []byte) bool {
			s, ok := jsonl.String(v)
			return ok && s == t && exact(v, jsonl.AppendString(nil, s))
		}}
}

func (b *TextContent) fields() []field {
	return []field{typeField("text"), strField("text", &b.Text, true), strField("textSignature", &b.TextSignature, false)}
}

func (b *ImageContent) fields() []field {
	return []field{typeField("image"), strField("data", &b.Data, true), strField("mimeType", &b.MimeType, true)}
}

func (b *ThinkingContent) fields() []field {
	return []field{typeField("thinking"), strField("thinking", &b.Thinking, true),
		strField("thinkingSignature", &b.ThinkingSignature, false), boolField("redacted", &b.Redacted, false)}
}

func (b *ToolCall) fields() []field {
	return []field{typeField("toolCall"), strField("id", &b.ID, true), strField("name", &b.Name, true),
		anyField("arguments", &b.Arguments, true, "{}"), strField("thoughtSignature", &b.ThoughtSignature, false)}
}

func (b *TextContent) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, b.fields(), &b.Fields)
}

func (b *ImageContent) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, b.fields(), &b.Fields)
}

func (b *ThinkingContent) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, b.fields(), &b.Fields)
}

func (b *ToolCall) appendJSON(dst []byte) ([]byte, error) {
	return encodeObject(dst, b.fields(), &b.Fields)
}

func (b *UnknownBlock) appendJSON(dst []byte) ([]byte, error) {
	return jsonl.Canonical(dst, b.Raw)
}

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *TextContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ImageContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ThinkingContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ToolCall) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

// MarshalJSON returns the block's JSON.
func (b *UnknownBlock) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

// DecodeBlock decodes one content block. A block of an unknown type, or
// one that is not an object, is an *UnknownBlock.
func DecodeBlock(raw []byte) Block {
	if jsonl.KindOf(raw) == jsonl.KindObject {
		v, _ := jsonl.Lookup(raw, "type")
		t, _ := jsonl.String(v)
		var b interface {
			Block
			fields() []field
			base() *Fields
		}
		switch t {
		case "text":
			b = &TextContent{}
		case "image":
			b = &ImageContent{}
		case "thinking":
			b = &ThinkingContent{}
		case "toolCall":
			b = &ToolCall{}
		}
		if b != nil && decodeObject(raw, b.fields(), b.base()) == nil {
			return b
		}
	}
	return &UnknownBlock{Raw: slices.Clone(raw)}
}

func (f *Fields) base() *Fields { return f }

// blocksField is an array of blocks (required: pi always writes it).
func blocksField(key string, p *[]Block) field {
	return field{key: key, required: true, zero: *p == nil,
		enc: func(dst []byte) ([]byte, error) { return appendBlocks(dst, *p) },
		dec: func(v []byte) bool {
			bs, ok := decodeBlocks(v)
			if ok {
				*p = bs
			}
			return ok
		}}
}

func appendBlocks(dst []byte, bs []Block) ([]byte, error) {
	dst = append(dst, '[')
	for i, b := range bs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if b == nil {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = b.appendJSON(dst); err != nil {
			return dst, fmt.Errorf("encode %s block: %w", b.BlockType(), err)
		}
	}
	return append(dst, ']'), nil
}

func decodeBlocks(v []byte) ([]Block, bool) {
	if jsonl.KindOf(v) != jsonl.KindArray {
		return nil, false
	}
	bs := []Block{}
	err := jsonl.Elements(v, func(e []byte) bool {
		bs = append(bs, DecodeBlock(e))
		return true
	})
	return bs, err == nil
}

// Content is the content of a user or custom message: a plain string
// (Blocks nil), or an array of blocks (Blocks not nil; Text unused).
type Content struct {
	Text   string
	Blocks []Block
}

// Text returns string content.
func Text(s string) Content { return Content{Text: s} }

// Blocks returns array content. With no blocks it is the empty array.
func Blocks(b ...Block) Content {
	if b == nil {
		b = []Block{}
	}
	return Content{Blocks: b}
}

// IsString reports whether the content is a plain string.
func (c Content) IsString() bool { return c.Blocks == nil }

// String returns the text of the content: the string, or the text blocks
// joined without separator (how pi reads a message's text).
func (c Content) String() string {
	if c.IsString() {
		return c.Text
	}
	var s []byte
	for _, b := range c.Blocks {
		if t, ok := b.(*TextContent); ok {
			s = append(s, t.Text...)
		}
	}
	return string(s)
}

func contentField(key string, p *Content) field {
	return field{key: key, required: true, zero: p.Blocks == nil && p.Text == "",
		enc: func(dst []byte) ([]byte, error) {
			if p.IsString() {
				return jsonl.AppendString(dst, p.Text), nil
			}
			return appendBlocks(dst, p.Blocks)
		},
		dec: func(v []byte) bool {
			if s, ok := jsonl.String(v); ok {
				if !exact(v, jsonl.AppendString(nil, s)) {
					return false
				}
				*p = Content{Text: s}
				return true
			}
			bs, ok := decodeBlocks(v)
			if ok {
				*p = Content{Blocks: bs}
			}
			return ok
		}}
}

// MarshalJSON returns the content as JSON.stringify writes it: a string,
// or the array of blocks.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsString() {
		return jsonl.AppendString(nil, c.Text), nil
	}
	return appendBlocks(nil, c.Blocks)
}
