package term

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEscaper checks the escaping of control characters on a
// terminal, with input split at every byte, and that JSON stays valid.
func TestEscaper(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"red \x1b[31mRED\x1b[0m", `red \u001b[31mRED\u001b[0m`},
		{"nul\x00 bel\x07 cr\r del\x7f", `nul\u0000 bel\u0007 cr\u000d del\u007f`},
		{"csi \u009b2J and nel \u0085 but é and ¢", `csi \u009b2J and nel \u0085 but é and ¢`},
		{"ends in \xc2", "ends in \xc2"},
		{`{"text":"a` + "\u0085" + `b"}`, `{"text":"a\u0085b"}`},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 2, 3, 1 << 20} {
			var out bytes.Buffer
			esc := &Escaper{W: &out}
			in := []byte(tc.in)
			for i := 0; i < len(in); i += step {
				chunk := in[i:min(i+step, len(in))]
				if n, err := esc.Write(chunk); err != nil || n != len(chunk) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := esc.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("escaping %q in writes of %d: %q, want %q", tc.in, step, out.String(), tc.want)
			}
		}
	}
	var v map[string]string
	var out bytes.Buffer
	esc := &Escaper{W: &out}
	esc.Write([]byte(`{"a":"x` + "\u009b\x7f" + `y"}`))
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["a"] != "x\u009b\x7fy" {
		t.Errorf("escaped JSON %s reads as %q, %v", out.String(), v, err)
	}
}
