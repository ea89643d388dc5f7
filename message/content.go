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
	// appendJSON appends Encode's bytes, with canon AppendJSON's.
	appendJSON(dst []byte, canon bool) ([]byte, error)
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

// The field tables of the block types, in pi's order.
var (
	textFields = []field[TextContent]{
		constField[TextContent]("type", "text"),
		strField("text", true, func(b *TextContent) *string { return &b.Text }),
		strField("textSignature", false, func(b *TextContent) *string { return &b.TextSignature }),
	}
	imageFields = []field[ImageContent]{
		constField[ImageContent]("type", "image"),
		strField("data", true, func(b *ImageContent) *string { return &b.Data }),
		strField("mimeType", true, func(b *ImageContent) *string { return &b.MimeType }),
	}
	thinkingFields = []field[ThinkingContent]{
		constField[ThinkingContent]("type", "thinking"),
		strField("thinking", true, func(b *ThinkingContent) *string { return &b.Thinking }),
		strField("thinkingSignature", false, func(b *ThinkingContent) *string { return &b.ThinkingSignature }),
		boolField("redacted", false, func(b *ThinkingContent) *bool { return &b.Redacted }),
	}
	toolCallFields = []field[ToolCall]{
		constField[ToolCall]("type", "toolCall"),
		strField("id", true, func(b *ToolCall) *string { return &b.ID }),
		strField("name", true, func(b *ToolCall) *string { return &b.Name }),
		anyField("arguments", true, "{}", func(b *ToolCall) *any { return &b.Arguments }),
		strField("thoughtSignature", false, func(b *ToolCall) *string { return &b.ThoughtSignature }),
	}
)

func (b *TextContent) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, b, textFields, &b.Fields, canon)
}

func (b *ImageContent) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, b, imageFields, &b.Fields, canon)
}

func (b *ThinkingContent) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, b, thinkingFields, &b.Fields, canon)
}

func (b *ToolCall) appendJSON(dst []byte, canon bool) ([]byte, error) {
	return encodeObject(dst, b, toolCallFields, &b.Fields, canon)
}

func (b *UnknownBlock) appendJSON(dst []byte, _ bool) ([]byte, error) {
	return jsonl.Canonical(dst, b.Raw)
}

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *TextContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil, false) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ImageContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil, false) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ThinkingContent) MarshalJSON() ([]byte, error) { return b.appendJSON(nil, false) }

// MarshalJSON returns the block as JSON.stringify writes it.
func (b *ToolCall) MarshalJSON() ([]byte, error) { return b.appendJSON(nil, false) }

// MarshalJSON returns the block's JSON.
func (b *UnknownBlock) MarshalJSON() ([]byte, error) { return b.appendJSON(nil, false) }

// DecodeBlock decodes one content block. A block of an unknown type, or
// one that is not an object, is an *UnknownBlock.
func DecodeBlock(raw []byte) Block {
	if jsonl.KindOf(raw) == jsonl.KindObject {
		v, _ := jsonl.Lookup(raw, "type")
		t, _ := jsonl.String(v)
		var b Block
		switch t {
		case "text":
			b = decodeBlockAs(raw, textFields, (*TextContent).base)
		case "image":
			b = decodeBlockAs(raw, imageFields, (*ImageContent).base)
		case "thinking":
			b = decodeBlockAs(raw, thinkingFields, (*ThinkingContent).base)
		case "toolCall":
			b = decodeBlockAs(raw, toolCallFields, (*ToolCall).base)
		}
		if b != nil {
			return b
		}
	}
	return &UnknownBlock{Raw: slices.Clone(raw)}
}

// DecodeBlocks decodes a JSON array of content blocks (a tool result's
// content), each as DecodeBlock decodes it; false when raw is not an
// array.
func DecodeBlocks(raw []byte) ([]Block, bool) { return decodeBlocks(raw) }

// DecodeContent decodes the content of a user or custom message: a JSON
// string, or an array of blocks (see DecodeBlocks); false for anything
// else.
func DecodeContent(raw []byte) (Content, bool) {
	if jsonl.KindOf(raw) == jsonl.KindString {
		s, ok := decodeString(raw)
		return Content{Text: s}, ok
	}
	bs, ok := decodeBlocks(raw)
	return Content{Blocks: bs}, ok
}

// decodeBlockAs decodes raw as a block of type T, or returns nil.
func decodeBlockAs[T any, PT interface {
	*T
	Block
}](raw []byte, fs []field[T], base func(PT) *Fields) Block {
	b := PT(new(T))
	if decodeObject(raw, (*T)(b), fs, base(b)) != nil {
		return nil
	}
	return b
}

func (f *Fields) base() *Fields { return f }

// blocksField is an array of blocks (required: pi always writes it).
func blocksField[T any](key string, p func(*T) *[]Block) field[T] {
	return field[T]{key: key, member: memberOf(key), required: true,
		zero: func(m *T) bool { return *p(m) == nil },
		enc: func(dst []byte, m *T, canon bool) ([]byte, error) {
			return appendBlocks(dst, *p(m), canon)
		},
		dec: func(m *T, v []byte) bool {
			bs, ok := decodeBlocks(v)
			if ok {
				*p(m) = bs
			}
			return ok
		}}
}

func appendBlocks(dst []byte, bs []Block, canon bool) ([]byte, error) {
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
		if dst, err = b.appendJSON(dst, canon); err != nil {
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
	if len(c.Blocks) == 1 {
		if t, ok := c.Blocks[0].(*TextContent); ok {
			return t.Text // no copy of what may be a large output
		}
	}
	var s []byte
	for _, b := range c.Blocks {
		if t, ok := b.(*TextContent); ok {
			s = append(s, t.Text...)
		}
	}
	return string(s)
}

func contentField[T any](key string, p func(*T) *Content) field[T] {
	return field[T]{key: key, member: memberOf(key), required: true,
		zero: func(m *T) bool {
			c := p(m)
			return c.Blocks == nil && c.Text == ""
		},
		enc: func(dst []byte, m *T, canon bool) ([]byte, error) {
			if c := p(m); !c.IsString() {
				return appendBlocks(dst, c.Blocks, canon)
			}
			return jsonl.AppendString(dst, p(m).Text), nil
		},
		dec: func(m *T, v []byte) bool {
			if jsonl.KindOf(v) == jsonl.KindString {
				s, ok := decodeString(v)
				if ok {
					*p(m) = Content{Text: s}
				}
				return ok
			}
			bs, ok := decodeBlocks(v)
			if ok {
				*p(m) = Content{Blocks: bs}
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
	return appendBlocks(nil, c.Blocks, false)
}
