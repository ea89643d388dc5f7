package jsonl_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// upper is a value with its own MarshalJSON, whose output has HTML
// characters, an escape and a number in another notation.
type upper struct{}

func (upper) MarshalJSON() ([]byte, error) { return []byte(`{"b" : "<\u0041>", "a":1.0E2}`), nil }

// TestAppendMarshal checks that AppendMarshal appends JSON.stringify's
// bytes after what dst holds, for JSON text and values encoding/json
// encodes (with HTML characters, U+2028, bytes that are not UTF-8, its
// own MarshalJSON), that Marshal returns the same bytes, and that both
// fail alike, AppendMarshal leaving dst as it was.
func TestAppendMarshal(t *testing.T) {
	t.Parallel()
	type args struct {
		Path string  `json:"path"`
		Old  string  `json:"oldText"`
		N    float64 `json:"n"`
		U    upper   `json:"u"`
		M    map[string]any
	}
	cases := []struct {
		v    any
		want string
	}{
		{args{Path: "a.go", Old: "<&>\u2028\xff\x00\"\\", N: 1e21, M: map[string]any{"z": 1.5, "a": []any{nil, true, "é"}}},
			"{\"path\":\"a.go\",\"oldText\":\"<&>\u2028\ufffd\\u0000\\\"\\\\\",\"n\":1e+21,\"u\":{\"b\":\"<A>\",\"a\":100},\"M\":{\"a\":[null,true,\"é\"],\"z\":1.5}}"},
		{map[string]string{"<": ">"}, `{"<":">"}`},
		{upper{}, `{"b":"<A>","a":100}`},
		{&upper{}, `{"b":"<A>","a":100}`},
		{[]int{1, 2}, `[1,2]`},
		{0.1, `0.1`},
		// JavaScript's negative zero: JSON.stringify(-0) is "0". (A -0.0
		// literal is +0 in Go.)
		{math.Copysign(0, -1), `0`},
		{"plain <string>\xff", "\"plain <string>\ufffd\""},
		{nil, `null`},
		{json.RawMessage(` {"b":1.0,"a":"\u003c"} `), `{"b":1,"a":"<"}`},
		{[]byte(`[1e2]`), `[100]`},
	}
	for i, c := range cases {
		prefix := []byte(`{"k":`)
		got, err := jsonl.AppendMarshal(bytes.Clone(prefix), c.v)
		if err != nil {
			t.Fatalf("#%d: AppendMarshal: %v", i, err)
		}
		if want := string(prefix) + c.want; string(got) != want {
			t.Errorf("#%d: AppendMarshal = %s, want %s", i, got, want)
		}
		if m, err := jsonl.Marshal(c.v); err != nil || string(m) != c.want {
			t.Errorf("#%d: Marshal = %s, %v; want %s", i, m, err, c.want)
		}
	}
	for i, v := range []any{math.NaN(), make(chan int), json.RawMessage(`{`), func() {}} {
		_, merr := jsonl.Marshal(v)
		got, err := jsonl.AppendMarshal([]byte("x"), v)
		if err == nil || merr == nil || err.Error() != merr.Error() {
			t.Errorf("#%d: AppendMarshal error %v, Marshal error %v", i, err, merr)
		}
		if string(got) != "x" {
			t.Errorf("#%d: AppendMarshal failed and returned %q", i, got)
		}
	}
}
