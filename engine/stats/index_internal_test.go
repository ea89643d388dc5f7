package stats

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/internal/cacheindex"
)

// TestIndexLineRoundTrip checks that every kind of stats index entry reads
// back as it was written: floats to the bit (infinities and NaN
// included), names that need escaping, a file left out for its
// migration error with its header.
func TestIndexLineRoundTrip(t *testing.T) {
	u := func(in int64, c float64) Usage {
		var x Usage
		x.Input, x.Output, x.TotalTokens = in, -3, 1<<53+1
		x.Cost.Input, x.Cost.Output, x.Cost.CacheRead, x.Cost.CacheWrite, x.Cost.Total = c, 0.1+0.2, math.Inf(1), math.SmallestNonzeroFloat64, math.NaN()
		return x
	}
	st := cacheindex.Stamp{Size: 10, MtimeNs: 20, Ino: 30, CtimeNs: 40}
	header := []byte(`{"type":"session","version":2,"id":"x\"y","cwd":"/w"}`)
	cases := map[string]*fileStats{
		"no header": {skip: errNoHeader},
		"migration": {header: header, headerOff: 3, headerLine: 2, skip: errors.New(`line 4: bad "thing"`)},
		"counted": {header: header, headerLine: 1, scope: &fileScope{
			entries: 7, messages: 5,
			types: []count{{"message", 5}, {"wéird \"type\"\n", 2}},
			roles: []count{{"assistant", 3}, {"user", 2}},
			usage: u(9, 1e-300),
			models: []Model{
				{Model: "p/m", Provider: "p", ModelID: "m", Messages: 2, Usage: u(4, 0.7)},
				{Model: "unknown", Messages: 1, Usage: u(5, 1.0/3)},
			},
		}, days: []dayUse{{quarter: -7, model: "p/m", messages: 2, usage: u(4, 0.7)}, {quarter: unknownQuarter, model: "wé\"ird", usage: u(5, 1.0/3)}}},
		"one model": {header: header, headerLine: 1, scope: &fileScope{entries: 1, messages: 1, types: []count{{"message", 1}}, roles: []count{{"assistant", 1}},
			usage: u(1, 0.25), models: []Model{{Model: "p/m", Provider: "p", ModelID: "m", Messages: 1, Usage: u(1, 0.25)}}}},
	}
	for name, f := range cases {
		line := encodeIndexLine(nil, "a.jsonl", indexEntry{st, f})
		n, ent, ok := decodeIndexLine(line[:len(line)-1])
		if !ok || n != "a.jsonl" || ent.Stamp != st {
			t.Errorf("%s: not read back: %s", name, line)
			continue
		}
		got := ent.stats
		if (got.skip == nil) != (f.skip == nil) || (f.skip != nil && got.skip.Error() != f.skip.Error()) {
			t.Errorf("%s: skip %v, want %v", name, got.skip, f.skip)
		}
		if f.skip == errNoHeader && got.skip != errNoHeader {
			t.Errorf("%s: the no-header reason is not errNoHeader", name)
		}
		if string(got.header) != string(f.header) || got.headerOff != f.headerOff || got.headerLine != f.headerLine {
			t.Errorf("%s: header %s @%d:%d", name, got.header, got.headerOff, got.headerLine)
		}
		if len(got.days) != len(f.days) {
			t.Errorf("%s: days %+v, want %+v", name, got.days, f.days)
		}
		for i := range min(len(got.days), len(f.days)) {
			g, w := got.days[i], f.days[i]
			if g.quarter != w.quarter || g.model != w.model || g.messages != w.messages || usageString(g.usage) != usageString(w.usage) {
				t.Errorf("%s: day %d: %+v, want %+v", name, i, g, w)
			}
		}
		if f.scope != nil && !sameBits(t, got.scope, f.scope) {
			t.Errorf("%s: scope\n got %+v\nwant %+v", name, got.scope, f.scope)
		}
	}
}

// sameBits compares two fileScopes, floats by their bits.
func sameBits(t *testing.T, a, b *fileScope) bool {
	t.Helper()
	if a == nil || a.entries != b.entries || a.messages != b.messages || !reflect.DeepEqual(a.types, b.types) || !reflect.DeepEqual(a.roles, b.roles) || len(a.models) != len(b.models) {
		return false
	}
	bits := func(u Usage) [10]uint64 {
		return [10]uint64{uint64(u.Input), uint64(u.Output), uint64(u.CacheRead), uint64(u.CacheWrite), uint64(u.TotalTokens),
			math.Float64bits(u.Cost.Input), math.Float64bits(u.Cost.Output), math.Float64bits(u.Cost.CacheRead), math.Float64bits(u.Cost.CacheWrite), math.Float64bits(u.Cost.Total)}
	}
	if bits(a.usage) != bits(b.usage) {
		return false
	}
	for i := range a.models {
		x, y := a.models[i], b.models[i]
		if x.Model != y.Model || x.Provider != y.Provider || x.ModelID != y.ModelID || x.Messages != y.Messages || bits(x.Usage) != bits(y.Usage) {
			return false
		}
	}
	return true
}
