package stats

import (
	"bytes"
	"math"
	"sort"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
)

// Usage is pi's usage of an assistant message (message.Usage, the one
// type of it): the token counts and cost its "usage" member reports, or a
// sum of them (Usage.Add). Costs are in dollars as the provider priced
// them. Its JSON is pi's usage object (message.Usage.MarshalJSON).
type Usage = message.Usage

// ReadUsage decodes a usage object leniently, for counting: a member that is missing or
// not a number counts 0. A usage without totalTokens counts input +
// output + cacheRead + cacheWrite; a cost without a total counts the sum
// of its parts. Token counts are rounded to whole numbers.
func ReadUsage(u []byte) Usage {
	var out Usage
	n := func(v []byte) float64 {
		if jsonl.KindOf(v) != jsonl.KindNumber {
			return 0
		}
		f, _ := jsonl.Number(v)
		return f
	}
	i := func(v []byte) int64 { return int64(math.Round(n(v))) }
	// One pass over each object's members; the last of repeated keys
	// wins, as in JSON.parse. (Usage comes from lines validated when they
	// were parsed.)
	var input, output, cacheRead, cacheWrite, total, c []byte
	members(u, func(k, v []byte) {
		switch string(k) {
		case "input":
			input = v
		case "output":
			output = v
		case "cacheRead":
			cacheRead = v
		case "cacheWrite":
			cacheWrite = v
		case "totalTokens":
			total = v
		case "cost":
			c = v
		}
	})
	out.Input, out.Output, out.CacheRead, out.CacheWrite = i(input), i(output), i(cacheRead), i(cacheWrite)
	if jsonl.KindOf(total) == jsonl.KindNumber {
		out.TotalTokens = i(total)
	} else {
		out.TotalTokens = out.Input + out.Output + out.CacheRead + out.CacheWrite
	}
	var ct []byte
	members(c, func(k, v []byte) {
		switch string(k) {
		case "input":
			out.Cost.Input = n(v)
		case "output":
			out.Cost.Output = n(v)
		case "cacheRead":
			out.Cost.CacheRead = n(v)
		case "cacheWrite":
			out.Cost.CacheWrite = n(v)
		case "total":
			ct = v
		}
	})
	if jsonl.KindOf(ct) == jsonl.KindNumber {
		out.Cost.Total = n(ct)
	} else {
		out.Cost.Total = out.Cost.Input + out.Cost.Output + out.Cost.CacheRead + out.Cost.CacheWrite
	}
	return out
}

// members calls fn with each member of the object v (nothing when v is
// not an object), keys decoded, in order.
func members(v []byte, fn func(key, val []byte)) {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return
	}
	_ = jsonl.MembersTrusted(v, func(k, val []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			s, _ := jsonl.String(append(append([]byte{'"'}, k...), '"'))
			k = []byte(s)
		}
		fn(k, val)
		return true
	})
}

// roundUsage drops the float noise of long sums (1e-10 dollars).
func roundUsage(u *Usage) {
	r := func(f *float64) { *f = math.Round(*f*1e10) / 1e10 }
	r(&u.Cost.Input)
	r(&u.Cost.Output)
	r(&u.Cost.CacheRead)
	r(&u.Cost.CacheWrite)
	r(&u.Cost.Total)
}

// Model is the assistant messages of one model in a Scope: Model is
// "provider/model" (see ModelName).
type Model struct {
	Model    string `json:"model"`
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	Messages int    `json:"messages"`
	Usage    Usage  `json:"usage"`
}

// Scope counts a set of entries: by type, messages by role, and the
// usage of the assistant messages in total and per model. Count makes
// one; NewScope, Add and Finish make one entry at a time.
type Scope struct {
	Entries  int            `json:"entries"`
	Types    map[string]int `json:"types"`
	Messages int            `json:"messages"`
	Roles    map[string]int `json:"roles"`
	Usage    Usage          `json:"usage"`
	Models   []*Model       `json:"models"`

	byModel map[string]*Model
}

// NewScope returns an empty Scope to Add entries to.
func NewScope() *Scope {
	return &Scope{Types: map[string]int{}, Roles: map[string]int{}, Models: []*Model{}, byModel: map[string]*Model{}}
}

// Count returns the Scope of entries.
func Count(entries []*engine.Entry) *Scope {
	s := NewScope()
	for _, en := range entries {
		s.Add(en)
	}
	s.Finish()
	return s
}

// Add counts one entry; a missing type or role counts as "(none)".
func (s *Scope) Add(en *engine.Entry) { s.add(en) }

// add is Add, returning what en spent (EntrySpent).
func (s *Scope) add(en *engine.Entry) (Spent, bool) {
	s.Entries++
	s.Types[human.Or(en.Type, "(none)")]++
	sp, role, ok := spentBy(en)
	if en.Type == jsonl.TypeMessage {
		s.Messages++
		s.Roles[role]++
	}
	if !ok {
		return sp, false
	}
	ms := s.byModel[sp.Model]
	if ms == nil {
		ms = &Model{Model: sp.Model, Provider: sp.Provider, ModelID: sp.ModelID}
		s.byModel[sp.Model] = ms
		s.Models = append(s.Models, ms)
	}
	if sp.Message {
		ms.Messages++
	}
	ms.Usage.Add(sp.Usage)
	s.Usage.Add(sp.Usage)
	return sp, true
}

// Spent is what one entry spent, as Scope counts it: the usage of an
// assistant message, of a pi 1.x usage entry, of a compaction or branch
// summary request, or of a tool's own model calls.
type Spent struct {
	// Model is the name Scope files the usage under: ModelName of the
	// provider and model, or SummariesProvider.
	Model    string
	Provider string
	ModelID  string
	Usage    Usage
	// Message is set for an assistant message, which Scope counts in
	// Model.Messages (with or without usage).
	Message bool
}

// EntrySpent returns what en spent, as Scope.Add counts it; false for an
// entry that spent nothing Scope counts. Whoever counts usage outside a
// Scope (per day, say) counts it with this, so that every count agrees.
func EntrySpent(en *engine.Entry) (Spent, bool) {
	sp, _, ok := spentBy(en)
	return sp, ok
}

// spentBy is EntrySpent, with the role of a message entry ("(none)"
// when it has none).
func spentBy(en *engine.Entry) (sp Spent, role string, ok bool) {
	switch en.Type {
	case jsonl.TypeUsage:
		// pi 1.x: usage a model spent outside the context (a summary, a
		// title, a cache warm-up), attributed to that model.
		f := fieldsOf(en.Raw, "provider", "model", "usage")
		if jsonl.KindOf(f[2]) != jsonl.KindObject {
			return Spent{}, "", false
		}
		p, _ := jsonl.String(f[0])
		m, _ := jsonl.String(f[1])
		return other(p, m, ReadUsage(f[2])), "", true
	case jsonl.TypeCompaction, jsonl.TypeBranchSummary:
		// pi 1.x: what the summary request spent, "Tools/summaries" in
		// pi's breakdown.
		if u := get(en.Raw, "usage"); jsonl.KindOf(u) == jsonl.KindObject {
			return other(SummariesProvider, "", ReadUsage(u)), "", true
		}
		return Spent{}, "", false
	case jsonl.TypeMessage:
	default:
		return Spent{}, "", false
	}
	// One pass over the message's members (the line was validated when it
	// was parsed; the last of repeated keys wins, as in JSON.parse).
	var roleV, providerV, modelV, u []byte
	m := en.Message() // found when the line was parsed
	if m == nil {
		m, _ = en.Field("message")
	}
	if jsonl.KindOf(m) == jsonl.KindObject {
		_ = jsonl.MembersTrusted(m, func(k, v []byte) bool {
			switch string(k) {
			case "role":
				roleV = v
			case "provider":
				providerV = v
			case "model":
				modelV = v
			case "usage":
				u = v
			default:
				if bytes.IndexByte(k, '\\') >= 0 {
					// An escaped key: the slow way, for this message.
					roleV, providerV, modelV, u = get(m, "role"), get(m, "provider"), get(m, "model"), get(m, "usage")
					return false
				}
			}
			return true
		})
	}
	strOf := func(v []byte) string {
		s, _ := jsonl.String(v)
		return s
	}
	role = human.Or(strOf(roleV), "(none)")
	if role == "toolResult" && jsonl.KindOf(u) == jsonl.KindObject {
		// pi 1.x: what a tool's own model calls spent (a codemode script's).
		return other(SummariesProvider, "", ReadUsage(u)), role, true
	}
	if role != "assistant" {
		return Spent{}, role, false
	}
	provider, model := strOf(providerV), strOf(modelV)
	sp = Spent{Model: ModelName(provider, model), Provider: provider, ModelID: model, Message: true}
	if jsonl.KindOf(u) == jsonl.KindObject {
		sp.Usage = ReadUsage(u)
	}
	return sp, role, true
}

// SummariesProvider is the provider under which Scope counts the usage
// of compaction and branch summary requests (pi's "Tools/summaries").
const SummariesProvider = "Tools/summaries"

// other is the Spent of usage that no message carries (a usage entry's,
// a summary's).
func other(provider, model string, u Usage) Spent {
	name := ModelName(provider, model)
	if provider == SummariesProvider {
		name = provider
	}
	return Spent{Model: name, Provider: provider, ModelID: model, Usage: u}
}

// fieldsOf returns the values of the named members of obj.
func fieldsOf(obj []byte, keys ...string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = get(obj, k)
	}
	return out
}

// Finish rounds the sums (float noise of 1e-10 dollars) and sorts the
// models by total tokens, then by name. Call it once, after the last Add.
func (s *Scope) Finish() {
	roundUsage(&s.Usage)
	for _, m := range s.Models {
		roundUsage(&m.Usage)
	}
	sort.SliceStable(s.Models, func(i, j int) bool {
		a, b := s.Models[i], s.Models[j]
		if a.Usage.TotalTokens != b.Usage.TotalTokens {
			return a.Usage.TotalTokens > b.Usage.TotalTokens
		}
		return a.Model < b.Model
	})
}

// ModelName returns "provider/model" of an assistant message: "unknown"
// without either, the model alone without a provider, "provider/?"
// without a model.
func ModelName(provider, model string) string {
	switch {
	case provider == "" && model == "":
		return "unknown"
	case provider == "":
		return model
	case model == "":
		return provider + "/?"
	}
	return provider + "/" + model
}

// get returns a member of a raw object; nil when v is not an object or
// has no such member.
func get(v []byte, key string) []byte {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return nil
	}
	b, _ := jsonl.Lookup(v, key)
	return b
}

// sameCounts reports whether a and b hold the same counts and costs
// (Usage is not comparable with ==: it keeps unknown members).
func sameCounts(a, b Usage) bool {
	return a.Input == b.Input && a.Output == b.Output && a.CacheRead == b.CacheRead && a.CacheWrite == b.CacheWrite &&
		a.TotalTokens == b.TotalTokens && a.Cost.Input == b.Cost.Input && a.Cost.Output == b.Cost.Output &&
		a.Cost.CacheRead == b.Cost.CacheRead && a.Cost.CacheWrite == b.Cost.CacheWrite && a.Cost.Total == b.Cost.Total
}
