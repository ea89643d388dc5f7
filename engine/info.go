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
	dst = i.appendPath(dst)
	h, text := i.head(), allTextJSON(i)
	return dst, i.appendRest(make([]byte, 0, len(h)+len(text)+24), h, text)
}

// AppendJSONElement appends to dst the info as pi's list() element JSON,
// as MarshalJSON gives it, and returns the extended buffer: for a writer
// of many infos that reuses one buffer, where AppendJSON allocates the
// rest of each element.
func (i *Info) AppendJSONElement(dst []byte) []byte {
	return i.appendRest(i.appendPath(dst), i.head(), allTextJSON(i))
}

// head is the encoded element but the path and the texts (headJSON), as
// the list index holds it when the info came from there.
func (i *Info) head() []byte {
	if h := i.cachedHead(); h != nil {
		return h
	}
	return headJSON(i)
}

// appendPath appends the element's start: {"path":...,
func (i *Info) appendPath(dst []byte) []byte {
	dst = append(dst, `{"path":`...)
	dst = jsonl.AppendString(dst, i.Path)
	return append(dst, ',')
}

// appendRest appends the rest of the element after its path: the
// members of head, then allMessagesText (text, encoded), and the brace.
func (i *Info) appendRest(dst, head, text []byte) []byte {
	dst = append(dst, head[1:len(head)-1]...)
	dst = append(dst, `,"allMessagesText":`...)
	return append(append(dst, text...), '}')
}

// MarshalJSON returns the info as pi's list() element JSON (see
// AppendJSON).
func (i *Info) MarshalJSON() ([]byte, error) {
	return i.AppendJSONElement(nil), nil
}

// headJSON encodes every field of pi's list() element but the path and
// allMessagesText, in its order: the form the list index stores, so a
// listing served from the index copies it instead of encoding it again.
func headJSON(in *Info) []byte {
	b := jsonl.NewObject(256+len(in.FirstMessage)).
		Raw("id", idJSON(in)).
		String("cwd", in.Cwd)
	if in.HasName {
		b.String("name", in.Name)
	}
	if p := parentJSON(in); p != nil {
		b.Raw("parentSessionPath", p)
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

// idJSON returns the id as JSON: as it was read while ID still holds
// that value (an id of any type passes through, as in pi), null when
// there was none and ID is empty, else ID as a string.
func idJSON(in *Info) []byte {
	switch {
	case in.idJSON != nil && idText(in.idJSON) == in.ID:
		return in.idJSON
	case in.idJSON == nil && in.ID == "":
		return []byte("null")
	}
	return jsonl.AppendString(nil, in.ID)
}

// parentJSON returns parentSessionPath as JSON, nil to leave it out: as
// it was read while ParentSessionPath still holds that value, else
// ParentSessionPath as a string when it is not empty.
func parentJSON(in *Info) []byte {
	switch {
	case in.parentJSON != nil && parentText(in.parentJSON) == in.ParentSessionPath:
		return in.parentJSON
	case in.ParentSessionPath == "":
		return nil
	}
	return jsonl.AppendString(nil, in.ParentSessionPath)
}
