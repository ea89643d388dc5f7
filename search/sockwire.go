package search

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/layout"
)

// The search socket's protocol: JSON lines. The server speaks first with
// a hello (sockHello: the protocol and its version, the index directory
// and the stores it answers for); the client sends one request
// (sockRequest, at most maxSockRequest bytes); the server answers with
// messages (sockMsg) until one of type "end", "err" or "refuse", and
// closes the connection. A "refuse" (the stores are not the server's, the
// server is closing) or any failure before the first hit, error or end
// sends the client back to searching itself.
const (
	sockProto      = "sessctl-search"
	sockVersion    = 1
	maxSockRequest = 64 << 10 // a request line
	maxSockMsg     = 8 << 20  // a message line (a hit)
)

// wstr is a string on the wire: a JSON string when it is valid UTF-8
// (encoding/json would replace the bytes of one that is not), else
// {"b64": "..."}, so that paths and texts arrive byte for byte.
type wstr string

func (s wstr) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(struct {
		B64 string `json:"b64"`
	}{base64.StdEncoding.EncodeToString([]byte(s))})
}

func (s *wstr) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = wstr(v)
		return nil
	}
	var o struct {
		B64 string `json:"b64"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	v, err := base64.StdEncoding.DecodeString(o.B64)
	if err != nil {
		return err
	}
	*s = wstr(v)
	return nil
}

type sockPlace struct {
	Format string `json:"format"`
	Root   wstr   `json:"root"`
}

type sockHello struct {
	Proto  string      `json:"proto"`
	V      int         `json:"v"`
	Dir    wstr        `json:"dir"`
	Stores []sockPlace `json:"stores"`
}

type sockQuery struct {
	Text  wstr   `json:"text"`
	Cwd   wstr   `json:"cwd,omitempty"`
	Since *int64 `json:"since,omitempty"` // Unix nanoseconds
	Until *int64 `json:"until,omitempty"`
	Role  wstr   `json:"role,omitempty"`
	Tool  wstr   `json:"tool,omitempty"`
	Limit int    `json:"limit"`
}

type sockRequest struct {
	V      int         `json:"v"`
	Engine string      `json:"engine"`
	Stores []sockPlace `json:"stores"`
	Query  sockQuery   `json:"query"`
}

type sockHit struct {
	Path    wstr     `json:"path"`
	ID      wstr     `json:"id"`
	Name    wstr     `json:"name"`
	Cwd     wstr     `json:"cwd"`
	Format  string   `json:"format"`
	Entry   wstr     `json:"entry"`
	File    wstr     `json:"file"`
	Offset  int64    `json:"off"`
	Kind    string   `json:"kind"`
	Role    wstr     `json:"role"`
	Tool    wstr     `json:"tool"`
	Time    *int64   `json:"time,omitempty"` // Unix nanoseconds; none when the entry has no time
	Snippet wstr     `json:"snip"`
	Matches [][2]int `json:"m"`
	Short   wstr     `json:"short,omitempty"`
}

// sockMsg is one message of an answer: T is "wait" (still working),
// "prog" (Done, Total), "warn" (Msg), "hit" (Hit), "err" (Msg and the
// sentinels it matches, Is), "refuse" (Msg) or "end".
type sockMsg struct {
	T     string   `json:"t"`
	Done  int64    `json:"done,omitempty"`
	Total int64    `json:"total,omitempty"`
	Msg   wstr     `json:"msg,omitempty"`
	Is    []string `json:"is,omitempty"`
	Hit   *sockHit `json:"hit,omitempty"`
}

// sockSentinels are the errors an "err" message says its error matches.
var sockSentinels = []struct {
	name string
	err  error
}{{"query", ErrQuery}, {"index", ErrIndex}, {"invalid", fs.ErrInvalid}, {"notexist", fs.ErrNotExist}, {"permission", fs.ErrPermission}}

// remoteError is an error the server reported: its message, matching
// the sentinels it matched there.
type remoteError struct {
	msg string
	is  []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.is }

func errMsg(err error) sockMsg {
	m := sockMsg{T: "err", Msg: wstr(err.Error())}
	for _, s := range sockSentinels {
		if errors.Is(err, s.err) {
			m.Is = append(m.Is, s.name)
		}
	}
	return m
}

func (m *sockMsg) err() error {
	e := &remoteError{msg: string(m.Msg)}
	for _, n := range m.Is {
		for _, s := range sockSentinels {
			if s.name == n {
				e.is = append(e.is, s.err)
			}
		}
	}
	return e
}

func unixNano(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

func fromUnixNano(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}

func toSockQuery(q Query) sockQuery {
	return sockQuery{Text: wstr(q.Text), Cwd: wstr(q.Cwd), Since: unixNano(q.Since), Until: unixNano(q.Until),
		Role: wstr(q.Role), Tool: wstr(q.Tool), Limit: q.Limit}
}

func (s sockQuery) query(stores []layout.Place) Query {
	return Query{Text: string(s.Text), Stores: stores, Cwd: string(s.Cwd), Since: fromUnixNano(s.Since), Until: fromUnixNano(s.Until),
		Role: string(s.Role), Tool: string(s.Tool), Limit: s.Limit}
}

// sockPlaces returns the places on the wire; with abs, their roots made
// absolute and clean (a server's). A client sends its roots as they are:
// a hit's paths are made from them, so a relative root (which never
// matches a server's) is searched by the client itself.
func sockPlaces(ps []layout.Place, abs bool) ([]sockPlace, error) {
	out := make([]sockPlace, 0, len(ps))
	for _, p := range ps {
		root := p.Root
		if abs {
			var err error
			if root, err = filepath.Abs(root); err != nil {
				return nil, fmt.Errorf("store %s: %w", p.Root, err)
			}
		}
		out = append(out, sockPlace{Format: p.Format.String(), Root: wstr(root)})
	}
	return out, nil
}

func (p sockPlace) place() (layout.Place, bool) {
	f, ok := parseFormat(p.Format)
	return layout.Place{Format: f, Root: string(p.Root)}, ok
}

func parseFormat(s string) (layout.Format, bool) {
	for _, f := range []layout.Format{layout.FormatJSONL, layout.FormatAgentUse} {
		if f.String() == s {
			return f, true
		}
	}
	return 0, false
}

func parseKind(s string) Kind {
	for k := Kind(1); k <= kindLast; k++ {
		if k.String() == s {
			return k
		}
	}
	return 0
}

func toSockHit(h *Hit) *sockHit {
	return &sockHit{Path: wstr(h.Session.Path), ID: wstr(h.Session.ID), Name: wstr(h.Session.Name), Cwd: wstr(h.Session.Cwd),
		Format: h.Session.Format.String(), Entry: wstr(h.Entry), File: wstr(h.File), Offset: h.Offset, Kind: h.Kind.String(),
		Role: wstr(h.Role), Tool: wstr(h.Tool), Time: unixNano(h.Time), Snippet: wstr(h.Snippet), Matches: h.Matches, Short: wstr(h.Session.Short)}
}

func (s *sockHit) hit() (Hit, error) {
	f, ok := parseFormat(s.Format)
	k := parseKind(s.Kind)
	if !ok || k == 0 {
		return Hit{}, fmt.Errorf("search server: a hit of format %q and kind %q", s.Format, s.Kind)
	}
	return Hit{Session: Session{Path: string(s.Path), ID: string(s.ID), Name: string(s.Name), Cwd: string(s.Cwd), Format: f, Short: string(s.Short)},
		Entry: string(s.Entry), File: string(s.File), Offset: s.Offset, Kind: k, Role: string(s.Role), Tool: string(s.Tool),
		Time: fromUnixNano(s.Time), Snippet: string(s.Snippet), Matches: s.Matches}, nil
}

// covers reports whether every one of want is among have.
func covers(have, want []sockPlace) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return len(want) > 0
}
