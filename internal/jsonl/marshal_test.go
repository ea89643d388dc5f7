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

// TestAppendMarshalIsMarshal checks that AppendMarshal appends what
// Marshal returns, for JSON text and values encoding/json encodes (with
// HTML characters, U+2028, bytes that are not UTF-8, its own
// MarshalJSON), and fails where Marshal fails, leaving dst as it was.
func TestAppendMarshalIsMarshal(t *testing.T) {
	type args struct {
		Path string  `json:"path"`
		Old  string  `json:"oldText"`
		N    float64 `json:"n"`
		U    upper   `json:"u"`
		M    map[string]any
	}
	values := []any{
		args{Path: "a.go", Old: "<&>\u2028\u2029\xff\x00\"\\", N: 1e21, M: map[string]any{"z": 1.5, "a": []any{nil, true, "é"}}},
		map[string]string{"<": ">"},
		upper{}, &upper{}, []int{1, 2}, 0.1, -0.0, "plain <string>\xff", nil,
		json.RawMessage(` {"b":1.0,"a":"\u003c"} `), []byte(`[1e2]`),
	}
	for i, v := range values {
		want, err := jsonl.Marshal(v)
		if err != nil {
			t.Fatalf("#%d: Marshal: %v", i, err)
		}
		for range 2 { // the second time with a reused encoder
			prefix := []byte(`{"k":`)
			got, err := jsonl.AppendMarshal(bytes.Clone(prefix), v)
			if err != nil {
				t.Fatalf("#%d: AppendMarshal: %v", i, err)
			}
			if !bytes.Equal(got, append(prefix, want...)) {
				t.Errorf("#%d: AppendMarshal appended %s, Marshal returned %s", i, got[len(prefix):], want)
			}
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
