package redact

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Mark replaces a masked secret.
const Mark = "[REDACTED]"

// rule masks one kind of secret; repl gets the submatches. The
// rule's regexp runs only on strings that contain one of its hints (in
// lower case), which keeps redaction of large sessions fast.
type rule struct {
	name  string
	hints []string
	re    *regexp.Regexp
	repl  func(m []string) string
}

var rules = []rule{
	{"private key", []string{"private key-----"},
		regexp.MustCompile(`(?s)(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
		func(m []string) string { return m[1] + Mark + m[2] }},
	{"openai/anthropic key", []string{"sk-"}, regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), nil},
	{"github token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), nil},
	{"github fine-grained token", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), nil},
	{"slack token", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), nil},
	{"aws access key id", []string{"akia", "asia"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), nil},
	{"google api key", []string{"aiza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), nil},
}

// String returns s with every likely secret in it replaced by Mark.
// Masking a masked text again changes nothing.
func String(s string) string {
	if s == "" {
		return s
	}
	lower := asciiLower(s)
	for _, r := range rules {
		hit := false
		for _, h := range r.hints {
			if strings.Contains(lower, h) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if r.repl == nil {
			s = r.re.ReplaceAllLiteralString(s, Mark)
		} else {
			s = r.re.ReplaceAllStringFunc(s, func(match string) string {
				return r.repl(r.re.FindStringSubmatch(match))
			})
		}
		lower = asciiLower(s)
	}
	s = redactAssignments(s, lower)
	s = redactBearer(s)
	return redactEntropy(s)
}

// asciiLower lower-cases ASCII letters only, so indexes stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// assignmentNames are the secret names whose assigned value is masked.
var assignmentNames = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "access_key", "private_key"}

// span is a byte range of a string to replace with the mark.
type span struct{ from, to int }

// maskSpans replaces the given ranges (sorted by from, not overlapping
// after the first of any overlap) with the mark.
func maskSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.from < last {
			continue
		}
		b.WriteString(s[last:sp.from])
		b.WriteString(Mark)
		last = sp.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactAssignments masks the value in NAME=VALUE and NAME: VALUE where
// NAME ends in one of assignmentNames, optionally followed by one _word
// suffix and a closing quote (GITHUB_TOKEN=x, "password": "x",
// SECRET_KEY: x). A quoted value keeps its quotes; an empty one is left.
func redactAssignments(s, lower string) string {
	var spans []span
	for _, name := range assignmentNames {
		for from := 0; ; {
			i := strings.Index(lower[from:], name)
			if i < 0 {
				break
			}
			i += from
			from = i + len(name)
			j := i + len(name)
			if j < len(s) && s[j] == '_' {
				k := j + 1
				for k < len(s) && isWordByte(s[k]) && s[k] != '_' {
					k++
				}
				if k > j+1 {
					j = k
				}
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				j++
			}
			for j < len(s) && isSpaceByte(s[j]) {
				j++
			}
			if j >= len(s) || (s[j] != ':' && s[j] != '=') {
				continue
			}
			j++
			for j < len(s) && isSpaceByte(s[j]) {
				j++
			}
			if j >= len(s) || strings.HasPrefix(s[j:], Mark) {
				continue
			}
			if q := s[j]; q == '"' || q == '\'' {
				end := strings.IndexAny(s[j+1:], string(q)+"\n")
				if end <= 0 || s[j+1+end] != q {
					continue // empty, or no closing quote on the line
				}
				if v := s[j+1 : j+1+end]; !strings.HasPrefix(v, Mark) {
					spans = append(spans, span{j + 1, j + 1 + end})
				}
				continue
			}
			k := j
			for k < len(s) && !strings.ContainsRune(" \t\r\n\"',;&)}]<>", rune(s[k])) {
				k++
			}
			if k > j {
				spans = append(spans, span{j, k})
			}
		}
	}
	return maskSpans(s, spans)
}

// bearerChar reports whether c can be part of a bearer token.
func bearerChar(c byte) bool {
	return isWordByte(c) || strings.IndexByte(".~+/=-", c) >= 0
}

// redactBearer masks the token after "Bearer " (any case) when it is at
// least 8 characters and has a digit or symbol, so prose is left alone.
func redactBearer(s string) string {
	lower := asciiLower(s)
	var spans []span
	for from := 0; ; {
		i := strings.Index(lower[from:], "bearer")
		if i < 0 {
			break
		}
		i += from
		from = i + len("bearer")
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		j := from
		for j < len(s) && (isSpaceByte(s[j]) || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		if j == from {
			continue
		}
		k := j
		for k < len(s) && bearerChar(s[k]) {
			k++
		}
		tok := s[j:k]
		if len(tok) >= 8 && strings.ContainsAny(tok, "0123456789._~+/=-") && !strings.Contains(tok, "REDACTED") {
			spans = append(spans, span{j, k})
		}
	}
	return maskSpans(s, spans)
}

// entropyChar reports whether c can be part of a high-entropy token.
func entropyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '_' || c == '=' || c == '-'
}

// redactEntropy masks runs of 32 or more token characters that look
// random (see highEntropy). A run that is part of a path (it starts with
// "/", or follows "." or "~", and has a "/" in it) is judged one path
// component at a time, so mixed-case directory and file names are left
// alone while a random component of 32 or more characters is still
// masked.
func redactEntropy(s string) string {
	var b strings.Builder
	last := 0
	mask := func(from, to int) {
		b.WriteString(s[last:from])
		b.WriteString(Mark)
		last = to
	}
	for i := 0; i < len(s); {
		if !entropyChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && entropyChar(s[j]) {
			j++
		}
		if j-i >= 32 {
			pathLike := strings.IndexByte(s[i:j], '/') >= 0 &&
				(s[i] == '/' || i > 0 && (s[i-1] == '.' || s[i-1] == '~'))
			if !pathLike {
				if highEntropy(s[i:j]) {
					mask(i, j)
				}
			} else {
				for k := i; k < j; {
					end := strings.IndexByte(s[k:j], '/')
					if end < 0 {
						end = j
					} else {
						end += k
					}
					if end-k >= 32 && highEntropy(s[k:end]) {
						mask(k, end)
					}
					k = end + 1
				}
			}
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// highEntropy reports whether a token looks random: upper case, lower
// case and digits mixed, and at least 4.5 bits of entropy per character.
func highEntropy(s string) bool {
	var upper, lower, digit bool
	var counts [256]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		counts[c]++
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	if !upper || !lower || !digit {
		return false
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 4.5
}

// headerKeep and entryKeep are the top-level members of a header and of
// an entry that --redact leaves alone: the file's structure (types, ids,
// links, times) and its paths. Everything else is content and redacted.
var (
	headerKeep = map[string]bool{"type": true, "version": true, "id": true, "timestamp": true, "cwd": true, "parentSession": true}
	entryKeep  = map[string]bool{"type": true, "id": true, "parentId": true, "timestamp": true, "targetId": true, "firstKeptEntryId": true, "fromId": true}
)

// redactMembers appends the object v with every member redacted except
// those named in keep, which are copied as they are. A v that is not an
// object is redacted whole.
func redactMembers(dst, v []byte, keep map[string]bool) []byte {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return redactJSON(dst, v, 0)
	}
	return redactObject(dst, v, 1, func(key string) bool { return keep[key] })
}

// redactObject appends the object v with every member's value redacted
// (at depth), except the members keep names, which are copied as they
// are. Keys are kept, and so is the order of the members.
func redactObject(dst, v []byte, depth int, keep func(key string) bool) []byte {
	dst = append(dst, '{')
	first := true
	_ = jsonl.Members(v, func(m *jsonl.Member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, '"', ':')
		if keep(m.KeyString()) {
			dst = append(dst, m.Value...)
		} else {
			dst = redactJSON(dst, m.Value, depth)
		}
		return true
	})
	return append(dst, '}')
}

// maxRedactDepth bounds the recursion of redactJSON; deeper values are
// kept as they are when nothing in their JSON text matches, and replaced
// whole by the mark (a string) when anything does.
const maxRedactDepth = 256

// redactJSON appends v with every string value redacted (keys are not),
// keeping key order and the raw bytes of whatever is unchanged. The data
// of image blocks ({"type":"image","data":...}) is kept.
func redactJSON(dst, v []byte, depth int) []byte {
	switch jsonl.KindOf(v) {
	case jsonl.KindString:
		s, ok := jsonl.String(v)
		if !ok {
			return append(dst, v...)
		}
		if r := String(s); r != s {
			return jsonl.AppendString(dst, r)
		}
		return append(dst, v...)
	case jsonl.KindObject, jsonl.KindArray:
	default:
		return append(dst, v...)
	}
	if depth >= maxRedactDepth {
		if String(string(v)) != string(v) {
			return jsonl.AppendString(dst, Mark)
		}
		return append(dst, v...)
	}
	if jsonl.KindOf(v) == jsonl.KindArray {
		dst = append(dst, '[')
		first := true
		_ = jsonl.Elements(v, func(el []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = redactJSON(dst, el, depth+1)
			return true
		})
		return append(dst, ']')
	}
	typ, _ := jsonl.Lookup(v, "type")
	t, _ := jsonl.String(typ)
	image := t == "image"
	return redactObject(dst, v, depth+1, func(key string) bool { return image && key == "data" })
}

// ErrNotObject is returned for a line that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// Header returns a session header line with its secrets masked. It keeps
// the members that describe the file (type, version, id, timestamp, cwd,
// parentSession) as they are and masks the string values of every other
// member. It fails, returning no line, when line is not a JSON object or
// when the masked result does not parse as one.
func Header(line []byte) ([]byte, error) { return object(line, headerKeep) }

// Entry returns an entry line with its secrets masked. It keeps the
// members that give the tree its shape (type, id, parentId, timestamp,
// targetId, firstKeptEntryId, fromId) as they are and masks the string
// values of every other member, leaving the data of image blocks alone.
// It fails, returning no line, when line is not a JSON object or when the
// masked result does not parse as one.
func Entry(line []byte) ([]byte, error) { return object(line, entryKeep) }

// Line returns one line of a session file with its secrets masked: a
// header (type "session") as Header masks it, any other entry as Entry
// does. A line ending (LF or CRLF) is kept. Line is what a feature that
// copies raw JSONL lines elsewhere (sync, sharing) calls; on an error it
// must not fall back to the unmasked line.
func Line(line []byte) ([]byte, error) {
	body, eol := line, []byte(nil)
	if n := len(body); n > 0 && body[n-1] == '\n' {
		body, eol = body[:n-1], body[n-1:]
		if n := len(body); n > 0 && body[n-1] == '\r' {
			body, eol = body[:n-1], line[n-1:]
		}
	}
	en, err := jsonl.ParseEntry(body)
	if err != nil {
		return nil, fmt.Errorf("redact line: %w", ErrNotObject)
	}
	keep := entryKeep
	if en.IsHeader() {
		keep = headerKeep
	}
	out, err := object(body, keep)
	if err != nil {
		return nil, err
	}
	return append(out, eol...), nil
}

// object masks an object line, keeping the members named in keep, and
// checks that the result is still a JSON object.
func object(line []byte, keep map[string]bool) ([]byte, error) {
	if jsonl.KindOf(line) != jsonl.KindObject || !jsonl.Valid(line) {
		return nil, fmt.Errorf("redact line: %w", ErrNotObject)
	}
	out := redactMembers(nil, line, keep)
	if _, err := jsonl.ParseEntry(out); err != nil {
		return nil, fmt.Errorf("redact line: the masked line does not parse: %w", err)
	}
	return out, nil
}

// Rules is this package's masking as a value, for an API that takes a
// masker (engine/render's Redactor): its methods are the functions
// Header, Entry and String.
type Rules struct{}

// Header is the package function Header.
func (Rules) Header(line []byte) ([]byte, error) { return Header(line) }

// Entry is the package function Entry.
func (Rules) Entry(line []byte) ([]byte, error) { return Entry(line) }

// String is the package function String.
func (Rules) String(s string) string { return String(s) }
