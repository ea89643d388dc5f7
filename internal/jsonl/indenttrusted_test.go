package jsonl

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// IndentTrusted gives encoding/json.Indent's bytes for the corpus's lines,
// and for values with whitespace, escapes, empty containers and nesting.
func TestIndentTrustedIsIndent(t *testing.T) {
	vals := []string{
		`{}`, `[]`, `{"a":[]}`, `[{},[],{"b":{}}]`, `"x"`, `12`, `-1.5e3`, `true`, `null`,
		` { "a" : [ 1 , 2 , { "b" : "c\"d\\" } ] , "e" : { } , "f":[ ] } `,
		"{\"k\\u00e9y\":\"caf\\u00e9 \\n\\t \\\" \",\"n\":1.0000,\"l\":[true,false,null]}\n",
		"\t[ \"a\" ,\r\n\"b\" ]\n  ",
		`{"deep":[[[[{"x":[[]]}]]]]}`,
	}
	for _, data := range testenv.CorpusFiles(t, testenv.Suffix(".jsonl"), "pi", "cases") {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if json.Valid(line) {
				vals = append(vals, string(line))
			}
		}
	}
	for _, v := range vals {
		for _, pi := range [][2]string{{"", "  "}, {"    ", "  "}, {"> ", "\t"}} {
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(v), pi[0], pi[1]); err != nil {
				t.Fatalf("json.Indent(%q): %v", v, err)
			}
			got := IndentTrusted([]byte("keep:"), []byte(v), pi[0], pi[1])
			if string(got) != "keep:"+want.String() {
				t.Errorf("IndentTrusted(%q, %q, %q) =\n%s\nwant\n%s", v, pi[0], pi[1], got, "keep:"+want.String())
			}
		}
	}
}

// FuzzIndentTrusted compares IndentTrusted with encoding/json.Indent on
// every valid input.
func FuzzIndentTrusted(f *testing.F) {
	f.Add([]byte(` {"a" : [ 1, {}, [] ,"x\"y"]} `))
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, v, "  ", "\t"); err != nil {
			return
		}
		if got := IndentTrusted(nil, v, "  ", "\t"); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("IndentTrusted(%q) = %q, want %q", v, got, want.Bytes())
		}
	})
}
