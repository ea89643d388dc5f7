package jsonl

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected strings below were produced by Node 20's Number#toString and
// JSON.stringify(JSON.parse(x)), the behaviour pi relies on.

func TestAppendNumberMatchesJavaScript(t *testing.T) {
	t.Parallel()
	one, two, three, tenth := 1.0, 2.0, 3.0, 0.1
	point3 := tenth + two*tenth // 0.1 + 0.2 in float64 arithmetic
	third := one / three
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {0.1, "0.1"}, {1.5, "1.5"},
		{123456789, "123456789"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"}, {123e20, "1.23e+22"},
		{1.5e-7, "1.5e-7"}, {0.000001, "0.000001"}, {1e-7, "1e-7"}, {3e-5, "0.00003"},
		{0.000075, "0.000075"}, {0.000105, "0.000105"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"}, {9007199254740992, "9007199254740992"}, {12.17, "12.17"}, {2.3125, "2.3125"},
		{-1.25e-10, "-1.25e-10"}, {point3, "0.30000000000000004"}, {third, "0.3333333333333333"},
		{123456789012345680000, "123456789012345680000"}, {1234567890123456789012, "1.2345678901234568e+21"},
		{math.NaN(), "null"}, {math.Inf(1), "null"},
	}
	for _, c := range cases {
		if got := string(AppendNumber(nil, c.in)); got != c.want {
			t.Errorf("AppendNumber(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCanonicalMatchesJSONStringify(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"b":"<&>","a":"é","2":1,"1":2}`, `{"1":2,"2":1,"b":"<&>","a":"é"}`},
		{`{"a":1,"a":2,"b":3}`, `{"a":2,"b":3}`},
		{`{"x":"\u2028\u00e9\/\ud83d\ude00\ud800","y":[1.0,1e2,-0,0.10]}`, "{\"x\":\"\u2028é/😀\\ud800\",\"y\":[1,100,0,0.1]}"},
		{`"\u0001\u001f\u007f"`, "\"\\u0001\\u001f\x7f\""},
		{`{"4294967294":1,"4294967295":2,"01":3,"0":4}`, `{"0":4,"4294967294":1,"4294967295":2,"01":3}`},
		{" { \"k\" : [ 1 , { } , [ ] , \"\\t\" ] } \r\n", `{"k":[1,{},[],"\t"]}`},
		// Invalid UTF-8 as Node reads it: one U+FFFD per maximal subpart
		// (Buffer#toString gives 2, 2, 1, 3, 2 and 4 characters for these),
		// and keys that read the same are one key.
		{"\"\xe2\x82a|\xff\xff|\xf0\x9f\x98|\xed\xa0\x80|\xc0\xaf|\xf4\x90\x80\x80\"", "\"\uFFFDa|\uFFFD\uFFFD|\uFFFD|\uFFFD\uFFFD\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD\uFFFD\""},
		{"{\"\xff\":null,\"\xfe\":{},\"\uFFFD!\":1}", "{\"\uFFFD\":{},\"\uFFFD!\":1}"},
		// Escaped keys are compared as the strings they spell; lone
		// surrogates stay distinct keys (printed by Node).
		{`{"\ud800":1,"\udbff":2,"\ud800":3,"\u0031":4,"a\u0062":5,"ab":6}`, `{"1":4,"\ud800":3,"\udbff":2,"ab":6}`},
		// Deliberate difference: values a double cannot hold stay as written.
		{`{"big":12345678901234567890,"exact":9007199254740993}`, `{"big":12345678901234567890,"exact":9007199254740993}`},
	}
	for _, c := range cases {
		got, err := Canonical(nil, []byte(c.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
		if !IsCanonical(got) {
			t.Errorf("Canonical output %s is not canonical itself", got)
		}
	}
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	inputs := []string{
		`{}`, `[]`, `{"a":[1,2,{"b":null}]}`, `"x"`, `1`, `-0.5e+10`, `true`, `null`,
		`{"a":}`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, "\"\x01\"",
		`{"a":"\u12"}`, `[`, `]`, `{"a":1}}`, `nul`, `tru`, `"abc`, `{"a":[}`, `[[[[]]]]`,
		"\t{ \"a\" :\n1 }\r", `{"a":"\ud800"}`, `[1 2]`, `{,}`,
	}
	for _, in := range inputs {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
}

func TestValidDeepNestingDoesNotRecurse(t *testing.T) {
	t.Parallel()
	const depth = 200000
	b := make([]byte, 0, 2*depth+8)
	for i := 0; i < depth; i++ {
		b = append(b, '[')
	}
	for i := 0; i < depth; i++ {
		b = append(b, ']')
	}
	if !Valid(b) {
		t.Fatal("deeply nested array should be valid")
	}
	if Valid(b[:len(b)-1]) {
		t.Fatal("unbalanced deep array should be invalid")
	}
	if _, err := Canonical(nil, b); err != nil {
		t.Fatalf("Canonical of deep array: %v", err)
	}
}

func TestAppendStringEscapesLikeJavaScript(t *testing.T) {
	t.Parallel()
	in := "a\"b\\c\n\t\x01<>&\u2028\u2029é\xff"
	want := "\"a\\\"b\\\\c\\n\\t\\u0001<>&\u2028\u2029é\uFFFD\""
	if got := string(AppendString(nil, in)); got != want {
		t.Errorf("AppendString = %q, want %q", got, want)
	}
}

// The fast canonical check must agree with the general encoder.
func TestIsCanonicalAgreesWithCanonical(t *testing.T) {
	t.Parallel()
	inputs := []string{
		`{"a":1}`, `{"a":1.0}`, `{"a":1e2}`, `{"a":-0}`, `{"a":0.1}`, `{"a":1e21}`, `{"a":1e+21}`, `{"a":123456789012345678}`,
		`{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":"\/"}`, `{"a":"\u001f"}`, `{"a":"\u001F"}`, `{"a":"\n"}`, `{"a":"\u000a"}`,
		`{"a":"\ud800"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\udc00"}`, `{"a":"x\ud800\udc00"}`, "{\"a\":\"\xff\"}",
		`{"a":1,"a":2}`, `{"1":1,"b":2}`, `{"b":2,"1":1}`, `{"01":1}`, `{"a" :1}`, `{ "a":1}`, `[1, 2]`, `[1,2]`,
		`{"a":[{"b":{"c":[true,false,null]}}]}`, `{"k\u0065y":1}`, `""`, `"<&>\u2028"`, `{"a":-1.5e-7}`, `{"a":1.5e-7}`,
		`{"a":0.000001}`, `{"a":1E5}`, `{"a":0.00036}`, `{"a":0.5}`, `{"a":0.50}`, `{"a":123.456}`,
		`{"a":0.0000015}`, `{"a":0.000015}`, `{"a":-0.25}`, `{"a":1234567890.12345}`, `{"a":1234567890.123456}`,
		`{"a":0.1234567890123456}`, `{"a":100.0}`,
	}
	for _, in := range inputs {
		out, err := Canonical(nil, []byte(in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", in, err)
			continue
		}
		want := string(out) == in
		if got := IsCanonical([]byte(in)); got != want {
			t.Errorf("IsCanonical(%s) = %v, but Canonical gives %s", in, got, out)
		}
	}
}

func TestISOTimeMatchesToISOString(t *testing.T) {
	t.Parallel()
	for _, ms := range []int64{0, 1, 999, 1772355600123, 253402300799999, 253402300800000, -1, -62167219200000, 8.64e15} {
		tm := time.UnixMilli(ms)
		if got, want := ISOTime(tm), FormatISOMillis(ms); got != want {
			t.Errorf("ISOTime(%d) = %s, want %s", ms, got, want)
		}
	}
}

// ParseEntryCanonical must agree with ParseEntry, and never call a line
// canonical that is not.
func TestParseEntryCanonicalAgrees(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"content":"x","role":"assistant"}}`,
		` {"type":"message","id":"a"} `,
		`{"type":"message","id":"a","id":"b"}`,
		`{"type":"message","message":{"role":"user","role":"assistant"}}`,
		`{"type":"x","n":1.0}`, `{"type":"x","n":1}`, `{"t\u0079pe":"x"}`, `{"1":2,"a":1}`, `{}`, `{"a":"\/"}`,
		`{"type":"message","message":"not an object"}`, `[1]`, `{"a":}`, `{"id":5,"parentId":true}`,
	}
	for _, l := range lines {
		e, canon, err := ParseEntryCanonical([]byte(l))
		want, werr := ParseEntry([]byte(l))
		if (err == nil) != (werr == nil) {
			t.Errorf("%s: error %v, ParseEntry says %v", l, err, werr)
			continue
		}
		if err != nil {
			continue
		}
		if e.Type != want.Type || e.ID != want.ID || e.IDKind != want.IDKind || e.ParentID != want.ParentID ||
			e.ParentKind != want.ParentKind || e.Timestamp != want.Timestamp || e.Role != want.Role ||
			string(e.Message()) != string(want.Message()) || string(e.Raw) != string(want.Raw) {
			t.Errorf("%s: entry %+v, ParseEntry gives %+v", l, e, want)
		}
		// It may say false for canonical lines it leaves to the general
		// path (array-index keys, escaped keys), never true for others.
		if canon && !IsCanonical(want.Raw) {
			t.Errorf("%s: called canonical, but it is not", l)
		}
	}
}

// TestAppendEscapedTokenIsCanonicalBody checks both paths of
// AppendEscapedToken (copying a token already in JSON.stringify's form,
// re-encoding any other) against Canonical, and that it appends.
func TestAppendEscapedTokenIsCanonicalBody(t *testing.T) {
	t.Parallel()
	tokens := []string{
		`""`, `"plain"`, `"tab\tquote\"back\\"`, `"\u0041\/"`, `"\ud800 lone"`,
		`"\ud83d\ude00 pair"`, `"\u001f\u007f\u2028"`, "\"raw\u2028é\"", `"\u00e9"`,
		"\"bad \xff utf8\"", `"` + strings.Repeat(`ab\n`, 40) + `"`,
	}
	for _, tok := range tokens {
		want, err := Canonical(nil, []byte(tok))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", tok, err)
		}
		got := AppendEscapedToken([]byte("x"), []byte(tok))
		if w := "x" + string(want[1:len(want)-1]); string(got) != w {
			t.Errorf("AppendEscapedToken(%s) = %q, want %q", tok, got, w)
		}
	}
	if got := AppendEscapedToken([]byte("x"), []byte(`5`)); string(got) != "x" {
		t.Errorf("a number token appended %q", got)
	}
}

// TestShortDecimalIsShortestDigits compares AppendNumber's short path
// with the shortest-digits formatting it skips (and with strconv's), on
// random doubles, on decimals of up to 17 digits at every scale it takes,
// their neighbours, and values around its bounds.
func TestShortDecimalIsShortestDigits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	short := 0
	check := func(f float64) {
		t.Helper()
		got, ok := appendShortDecimal(nil, f)
		if !ok {
			return
		}
		short++
		if want := string(appendShortest(nil, f)); string(got) != want {
			t.Fatalf("appendShortDecimal(%v) = %q, the shortest digits give %q", f, got, want)
		}
		if want := strconv.FormatFloat(f, 'f', -1, 64); string(got) != want {
			t.Fatalf("appendShortDecimal(%v) = %q, strconv gives %q", f, got, want)
		}
	}
	for range 20000 {
		check(math.Float64frombits(rng.Uint64() >> 1)) // positive, any exponent
		digits := 1 + rng.IntN(17)
		m := rng.Int64N(int64(math.Pow10(digits)))
		for k := 0; k <= 22; k++ {
			f := float64(m) / math.Pow10(k)
			check(f)
			check(math.Nextafter(f, 0))
			check(math.Nextafter(f, 2*f+1))
		}
	}
	for _, f := range []float64{1e-6, 1e-7, 0.0000015, 1e15 - 1, 1e15, 999999999999999.9, 0.1 + 0.2, 1.0 / 3, 0.03612, 0.0027, 0.04122, 12040, 1234.5} {
		check(f)
		check(math.Nextafter(f, 0))
		check(math.Nextafter(f, 2))
	}
	if short < 100000 {
		t.Fatalf("only %d values took the short path", short)
	}
}

// numberRef is Number's old definition, strconv.ParseFloat with
// infinities out of range: the reference smallInteger's shortcut must
// agree with to the bit.
func numberRef(v []byte) float64 {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		if len(v) > 0 && v[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return f
}

func TestNumberShortIntegers(t *testing.T) {
	t.Parallel()
	cases := []string{
		"0", "-0", "7", "-7", "1767225636467", "-1767225636467",
		"999999999999999", "-999999999999999", // 15 digits: the shortcut
		"9999999999999999", "12345678901234567890", // longer: ParseFloat
		"1.5", "1e3", "-1E-3", "0.0", "-0.0", "10", "100000000000000",
	}
	r := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		n := r.Int64N(1e15)
		if r.IntN(2) == 0 {
			n = -n
		}
		cases = append(cases, strconv.FormatInt(n, 10))
	}
	for _, c := range cases {
		got, ok := Number([]byte(c))
		if want := numberRef([]byte(c)); !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("Number(%s) = %v, %v; want %v (bits %x, %x)", c, got, ok, want, math.Float64bits(got), math.Float64bits(want))
		}
	}
	// Text the shortcut must leave to ParseFloat, or refuse.
	for _, c := range []string{"-", "", "12a", "1-2", "--1"} {
		if f, ok := smallInteger([]byte(c)); ok {
			t.Errorf("smallInteger(%q) = %v, true; want false", c, f)
		}
	}
}

func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1767225636467", "1e3", "-999999999999999", "1234567890123456"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if KindOf([]byte(s)) != KindNumber {
			return
		}
		got, _ := Number([]byte(s))
		if want := numberRef([]byte(s)); math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Errorf("Number(%q) = %v, want %v", s, got, want)
		}
	})
}
