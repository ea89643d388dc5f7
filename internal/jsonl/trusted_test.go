package jsonl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// On valid JSON the trusted walk finds exactly what the validating one
// finds.
func TestMembersTrustedAgreesOnValidJSON(t *testing.T) {
	t.Parallel()
	objs := []string{
		`{}`, `{"a":1}`, ` { "a" : "x\"y\\" , "b":[1,{"c":"]}"}],"d":{"e":null},"f":-1.5e3,"g":true } `,
		`{"s":"\\\\","t":"\\\"","u":"\u0022"}`, `{"k\"ey":{"n":[[],[[]]]}}`,
	}
	for _, o := range objs {
		var want, got []string
		if err := Members([]byte(o), func(m *Member) bool { want = append(want, string(m.Key), string(m.Value)); return true }); err != nil {
			t.Fatal(err)
		}
		if err := MembersTrusted([]byte(o), func(k, v []byte) bool { got = append(got, string(k), string(v)); return true }); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s:\n%s", o, diff)
		}
	}
}

// On garbage it never panics or hangs.
func TestMembersTrustedSurvivesGarbage(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"", "{", `{"a`, `{"a":`, `{"a":"\`, `{"a":[{`, `{"a":1,`, `{"a":1 2}`, `{:}`, `{"a":}`, `{"a":"x"]`} {
		_ = MembersTrusted([]byte(g), func(k, v []byte) bool { return true })
	}
}
