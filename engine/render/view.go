package render

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// rview is a raw JSON value seen through a few lenient accessors: a
// missing member, or a member of the wrong kind, reads as empty.
type rview []byte

func (v rview) get(key string) rview {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return nil
	}
	// The bytes were validated when their line was parsed.
	b, _ := jsonl.LookupTrusted(v, key)
	return rview(b)
}

func (v rview) kind() jsonl.Kind { return jsonl.KindOf(v) }

// robj is an object's members, found in one pass, for an object whose
// members are looked up several times (a message): rview.get walks the
// object again for each.
type robj []rmember

type rmember struct {
	key []byte // raw, without quotes
	val rview
}

// obj returns the members of v (none when v is not an object).
func (v rview) obj() robj { return v.objIn(nil) }

// objIn is obj with the members put in buf's memory (reused from its
// start), for a loop that looks at one object at a time.
func (v rview) objIn(buf robj) robj {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return nil
	}
	out := buf[:0]
	if out == nil {
		out = make(robj, 0, 12)
	}
	err := jsonl.MembersTrusted(v, func(k, val []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			dk, _ := jsonl.String(append(append([]byte{'"'}, k...), '"'))
			k = []byte(dk)
		}
		out = append(out, rmember{k, rview(val)})
		return true
	})
	if err != nil {
		return nil
	}
	return out
}

// get returns the last member named key, as rview.get.
func (o robj) get(key string) rview {
	for i := len(o) - 1; i >= 0; i-- {
		if string(o[i].key) == key {
			return o[i].val
		}
	}
	return nil
}

func (o robj) s(key string) string { return o.get(key).str() }

func (v rview) str() string {
	s, _ := jsonl.String(v)
	return s
}

func (v rview) s(key string) string { return v.get(key).str() }

func (v rview) num() (float64, bool) {
	if v.kind() != jsonl.KindNumber {
		return 0, false
	}
	return jsonl.Number(v)
}

func (v rview) isTrue() bool { return len(v) == 4 && string(v) == "true" }

func (v rview) elems() []rview {
	if v.kind() != jsonl.KindArray {
		return nil
	}
	var out []rview
	_ = jsonl.ElementsTrusted(v, func(el []byte) bool {
		out = append(out, rview(el))
		return true
	})
	return out
}

// compact returns the value as compact JSON text.
func (v rview) compact() string {
	if len(v) == 0 {
		return ""
	}
	b, err := jsonl.Canonical(nil, v)
	if err != nil {
		return string(v)
	}
	return string(b)
}

// cblock is one content block of a message.
type cblock struct {
	typ      string // text, thinking, toolCall, image, or the block's own type
	text     string // text, thinking
	redacted bool   // thinking: redacted by the provider
	name     string // toolCall
	callID   string // toolCall
	args     rview  // toolCall arguments
	mime     string // image
	dataRaw  rview  // image: the base64 data as stored (see data)
	raw      rview
}

// contentBlocks returns the content of a message: a string is one text block.
func contentBlocks(content rview) []cblock {
	switch content.kind() {
	case jsonl.KindString:
		return []cblock{{typ: "text", text: content.str(), raw: content}}
	case jsonl.KindArray:
	default:
		return nil
	}
	var out []cblock
	var members robj // one element's at a time: what is kept of it is copied out
	for _, raw := range content.elems() {
		el := raw.objIn(members)
		members = el
		b := cblock{typ: el.s("type"), raw: raw}
		switch b.typ {
		case "text":
			b.text = el.s("text")
		case "thinking":
			b.text = el.s("thinking")
			b.redacted = el.get("redacted").isTrue()
		case "toolCall":
			b.name = el.s("name")
			b.callID = el.s("id")
			b.args = el.get("arguments")
		case "image":
			b.mime = el.s("mimeType")
			// Decoded only where it is shown (an HTML page embeds it);
			// its size is known without (imageNote).
			b.dataRaw = el.get("data")
		}
		out = append(out, b)
	}
	return out
}

// textOf joins the text blocks of a content value.
func contentText(content rview) string {
	var parts []string
	for _, b := range contentBlocks(content) {
		if b.typ == "text" {
			parts = append(parts, b.text)
		}
	}
	return strings.Join(parts, "\n")
}

// message returns the message object of a message entry.
func msgOf(en *jsonl.Entry) rview {
	if m := en.Message(); m != nil { // found when the line was parsed
		return rview(m)
	}
	m, _ := en.Field("message")
	return rview(m)
}

// fieldOf returns a top-level member of an entry.
func entryField(en *jsonl.Entry, key string) rview {
	v, _ := jsonl.LookupTrusted(en.Raw, key)
	return rview(v)
}

// shortTime turns an ISO timestamp into "2006-01-02 15:04:05" (UTC).
func isoShort(ts string) string {
	if len(ts) >= 19 && ts[10] == 'T' {
		return ts[:10] + " " + ts[11:19]
	}
	return ts
}

// imageNote describes an image block: its type and decoded size.
func imageNote(b cblock) string {
	n := b.dataLen() * 3 / 4
	return fmt.Sprintf("%s, %s", human.Or(b.mime, "unknown type"), human.Bytes(n))
}

// data is an image block's data, decoded ("" when it is not a string).
func (b cblock) data() string { return b.dataRaw.str() }

// dataLen is len(b.data()), without decoding data that has no escapes
// (base64 never needs one).
func (b cblock) dataLen() int {
	if r := b.dataRaw; r.kind() == jsonl.KindString && bytes.IndexByte(r, '\\') < 0 {
		return len(r) - 2
	}
	return len(b.data())
}
