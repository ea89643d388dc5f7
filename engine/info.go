package engine

import "github.com/sessctl/sessctl/internal/jsonl"

// AppendJSON appends to dst the start of the info as pi's list() element
// JSON (its path member) and returns it, with the rest of the element:
// id, cwd, name (when set), parentSessionPath (when set), created,
// modified (ISO strings; null for an invalid date), messageCount,
// firstMessage, allMessagesText. Writing head then rest writes the
// element. rest is the info's own memory, not a copy (a listing served
// from the list index holds it encoded already): it must not be
// modified. It is for writers of many infos, with vectored I/O;
// MarshalJSON gives the element in one piece.
func (i *Info) AppendJSON(dst []byte) (head, rest []byte) {
	tail := i.cachedJSON()
	if tail == nil {
		tail = infoJSON(i)
	}
	dst = append(dst, `{"path":`...)
	dst = jsonl.AppendString(dst, i.Path)
	if len(tail) > 2 {
		dst = append(dst, ',')
	}
	return dst, tail[1:]
}

// MarshalJSON returns the info as pi's list() element JSON (see
// AppendJSON).
func (i *Info) MarshalJSON() ([]byte, error) {
	head, rest := i.AppendJSON(nil)
	return append(head, rest...), nil
}

// infoJSON encodes every field of pi's list() element but the path, in its
// order: the form the list index stores, so a listing served from the
// index copies it instead of encoding it again.
func infoJSON(in *Info) []byte {
	b := jsonl.NewObject(256+len(in.allTextJSON)+len(in.FirstMessage)).
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
		Raw("firstMessage", firstJSON(in)).
		Raw("allMessagesText", allTextJSON(in)).Bytes()
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
