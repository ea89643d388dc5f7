package jsonl

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// The expected layouts were produced by Node 20's
// JSON.stringify(JSON.parse(in), null, 2).
func TestIndentMatchesJSONStringify(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"scalar", `  "x" `, `"x"`},
		{"number", `1.50`, `1.5`},
		{"empty containers", `[[],{},[[]],{"a":{}}]`, "[\n  [],\n  {},\n  [\n    []\n  ],\n  {\n    \"a\": {}\n  }\n]"},
		{"empty object", `{ }`, `{}`},
		{"index keys first, duplicates keep first position",
			`{"b":1,"2":[],"1":{},"a":[1,{"x":"<>&\u2028\u0001\ud800"}],"b":2}`,
			"{\n  \"1\": {},\n  \"2\": [],\n  \"b\": 2,\n  \"a\": [\n    1,\n    {\n      \"x\": \"<>&\u2028\\u0001\\ud800\"\n    }\n  ]\n}"},
		{"numbers", `[1e21,1e-7,-0,0.1,100,1.5e300]`, "[\n  1e+21,\n  1e-7,\n  0,\n  0.1,\n  100,\n  1.5e+300\n]"},
		{"strings with structure characters", `{"k:,{":"a,b:[c]{d}\"e\\"}`, "{\n  \"k:,{\": \"a,b:[c]{d}\\\"e\\\\\"\n}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := Indent(nil, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("Indent(%s) =\n%s\nwant\n%s", c.in, got, c.want)
			}
		})
	}
	for _, bad := range []string{``, `{`, `{"a":1,}`, `[1] [2]`, "\"\x01\""} {
		if _, err := Indent(nil, []byte(bad)); err == nil {
			t.Errorf("Indent(%q) accepted invalid JSON", bad)
		}
	}
}

// TestIndentReproducesAgentUseFiles re-lays out every JSON file AgentUse
// wrote into the conformance corpus; each must come out byte-identical.
func TestIndentReproducesAgentUseFiles(t *testing.T) {
	t.Parallel()
	dir := testenv.Corpus(t, "agentuse")
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "api-driven"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := Indent(nil, raw)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if string(got) != string(raw) {
			t.Errorf("%s: Indent changed the file:\n%s", p, got)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("only %d JSON files found in the corpus", n)
	}
}
