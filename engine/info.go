package engine

import "github.com/sessctl/sessctl/internal/jsonl"

// AppendJSON appends to dst the start of the info as pi's list() element
// JSON (its path member) and returns it, with the rest of the element:
// id, cwd, name (when set), parentSessionPath (when set), created,
// modified (ISO strings; null for an invalid date), messageCount,
// firstMessage, allMessagesText. Writing head then rest writes the
// element; rest is copied from what the info holds encoded already (a
// listing served from the list index). It is for writers of many infos,
// with vectored I/O; MarshalJSON gives the element in one piece.
func (i *Info) AppendJSON(dst []byte) (head, rest []byte) {
	h := i.cachedHead()
	if h == nil {
		h = headJSON(i)
	}
	dst = append(dst, `{"path":`...)
	dst = jsonl.AppendString(dst, i.Path)
	dst = append(dst, ',')
	text := allTextJSON(i)
	rest = make([]byte, 0, len(h)+len(text)+24)
	rest = append(rest, h[1:len(h)-1]...)
	rest = append(rest, `,"allMessagesText":`...)
	rest = append(append(rest, text...), '}')
	return dst, rest
}

// AppendJSONElement appends to dst the info as pi's list() element JSON,
// as MarshalJSON gives it, and returns the extended buffer: for a writer
// of many infos that reuses one buffer, where AppendJSON allocates the
// rest of each element.
func (i *Info) AppendJSONElement(dst []byte) []byte {
	h := i.cachedHead()
	if h == nil {
		h = headJSON(i)
	}
	dst = append(dst, `{"path":`...)
	dst = jsonl.AppendString(dst, i.Path)
	dst = append(dst, ',')
	dst = append(dst, h[1:len(h)-1]...)
	dst = append(dst, `,"allMessagesText":`...)
	return append(append(dst, allTextJSON(i)...), '}')
}

// MarshalJSON returns the info as pi's list() element JSON (see
// AppendJSON).
func (i *Info) MarshalJSON() ([]byte, error) {
	head, rest := i.AppendJSON(nil)
	return append(head, rest...), nil
}

// headJSON encodes every field of pi's list() element but the path and
// allMessagesText, in its order: the form the list index stores, so a
// listing served from the index copies it instead of encoding it again.
func headJSON(in *Info) []byte {
	b := jsonl.NewObject(256+len(in.FirstMessage)).
		Raw("id", orNull(in.ID)).
		String("cwd", in.Cwd)
	if in.HasName {
		b.String("name", in.Name)
	}
	if in.ParentSessionPath != nil {
		b.Raw("parentSessionPath", in.ParentSessionPath)
	}
	if in.CreatedValid {
		b.String("created", jsonl.ISOTime(in.Created))
	} else {
		b.Null("created")
	}
	return b.String("modified", jsonl.ISOTime(in.Modified)).
		Number("messageCount", float64(in.MessageCount)).
		Raw("firstMessage", firstJSON(in)).Bytes()
}

// firstJSON returns firstMessage as a JSON string: as it was read when
// the info still holds that text, so a lone surrogate survives.
func firstJSON(in *Info) []byte {
	if in.firstJSON != nil {
		if s, _ := jsonl.String(in.firstJSON); s == in.FirstMessage {
			return in.firstJSON
		}
	}
	return jsonl.AppendString(nil, in.FirstMessage)
}

// allTextJSON returns allMessagesText as a JSON string.
func allTextJSON(in *Info) []byte {
	if in.allTextJSON != nil {
		return in.allTextJSON
	}
	return []byte(`""`)
}

func orNull(v []byte) []byte {
	if v == nil {
		return []byte("null")
	}
	return v
}
