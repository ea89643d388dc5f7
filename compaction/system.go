package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
)

// CurrentSystemMessage is pi-ai 1.x's getCurrentSystemMessage: every
// system-role message of msgs replayed into one, as a JSON object
// {role:"system", content, sections?, toolsAdded?, timestamp}: the
// non-empty texts of their contents joined by a blank line, their
// sections patched by name (null removes one), the tools added and not
// removed since (by name), and the first timestamp. It returns nil when
// no system message has a timestamp and no tool is left (pi's
// undefined). pi stores it as a compaction's systemMessage checkpoint.
func CurrentSystemMessage(msgs []Message) []byte {
	var (
		content  []string
		secKeys  []string
		secVals  = map[string][]byte{}
		toolKeys []string
		tools    = map[string][]byte{}
		stamp    []byte
	)
	del := func(keys []string, m map[string][]byte, k string) []string {
		if _, ok := m[k]; !ok {
			return keys
		}
		delete(m, k)
		for i, x := range keys {
			if x == k {
				return append(keys[:i:i], keys[i+1:]...)
			}
		}
		return keys
	}
	set := func(keys []string, m map[string][]byte, k string, v []byte) []string {
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = v
		return keys
	}
	for _, msg := range msgs {
		if roleOf(msg.Raw) != "system" {
			continue
		}
		f := fields(msg.Raw, "timestamp", "content", "sections", "toolsRemoved", "toolsAdded")
		if stamp == nil && f[0] != nil && jsonl.KindOf(f[0]) != jsonl.KindNull {
			stamp = f[0]
		}
		if t := contentText(f[1], "\n"); t != "" {
			content = append(content, t)
		}
		if jsonl.KindOf(f[2]) == jsonl.KindObject {
			// Object.entries: JavaScript property order.
			canon, err := jsonl.Canonical(nil, f[2])
			if err == nil {
				_ = jsonl.Members(canon, func(m *jsonl.Member) bool {
					k := m.KeyString()
					if jsonl.KindOf(m.Value) == jsonl.KindNull {
						secKeys = del(secKeys, secVals, k)
					} else {
						secKeys = set(secKeys, secVals, k, m.Value)
					}
					return true
				})
			}
		}
		eachElem(f[3], func(t []byte) {
			n, _ := jsonl.Lookup(t, "name")
			toolKeys = del(toolKeys, tools, string(n))
		})
		eachElem(f[4], func(t []byte) {
			n, _ := jsonl.Lookup(t, "name")
			toolKeys = set(toolKeys, tools, string(n), t)
		})
	}
	if stamp == nil && len(toolKeys) == 0 {
		return nil
	}
	text := ""
	for i, c := range content {
		if i > 0 {
			text += "\n\n"
		}
		text += c
	}
	b := jsonl.NewObject(64+len(text)).String("role", "system").String("content", text)
	if len(secKeys) > 0 {
		sb := jsonl.NewObject(64)
		for _, k := range secKeys {
			sb.Raw(k, secVals[k])
		}
		// Object.fromEntries, then JSON.stringify: property order again.
		if canon, err := jsonl.Canonical(nil, sb.Bytes()); err == nil {
			b.Raw("sections", canon)
		}
	}
	if len(toolKeys) > 0 {
		arr := []byte{'['}
		for i, k := range toolKeys {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = append(arr, tools[k]...)
		}
		b.Raw("toolsAdded", append(arr, ']'))
	}
	if stamp == nil {
		b.Number("timestamp", 0)
	} else {
		b.Raw("timestamp", stamp)
	}
	return b.Bytes()
}

// contentText is pi-ai's contentText: a string content itself, or the
// texts of its text blocks joined by sep.
func contentText(content []byte, sep string) string {
	if s, ok := jsonl.String(content); ok {
		return s
	}
	out := ""
	n := 0
	eachElem(content, func(b []byte) {
		bf := fields(b, "type", "text")
		if t, _ := jsonl.String(bf[0]); t != "text" {
			return
		}
		if n > 0 {
			out += sep
		}
		n++
		s, _ := jsonl.String(bf[1])
		out += s
	})
	return out
}
