package render

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestEscToMatchesHTMLEsc checks that escaping straight to the writer
// gives html.EscapeString's bytes.
func TestEscToMatchesHTMLEsc(t *testing.T) {
	for _, s := range []string{"", "plain", `<a href="x">'&'</a>`, "&amp; already", "é <\u2028> \x00", strings.Repeat(`"'<>&`, 1000)} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		escTo(w, s)
		w.Flush()
		if b.String() != htmlEsc(s) {
			t.Errorf("escTo(%q) = %q, want %q", s, b.String(), htmlEsc(s))
		}
	}
}

// TestMdBlockFences checks the fenced block mdBlock writes: a fence
// longer than any run of backticks, at least three, trailing newlines cut.
func TestMdBlockFences(t *testing.T) {
	for _, c := range []struct{ lang, s, want string }{
		{"", "x", "```\nx\n```\n"},
		{"sh", "$ ls\n\n", "```sh\n$ ls\n```\n"},
		{"json", "a ```` b", "`````json\na ```` b\n`````\n"},
		{"", "", "```\n\n```\n"},
	} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		mdBlock(w, c.lang, c.s)
		w.Flush()
		if b.String() != c.want {
			t.Errorf("mdBlock(%q, %q) = %q, want %q", c.lang, c.s, b.String(), c.want)
		}
	}
}

// TestImageDataLen checks that an image's size is its decoded data's,
// also when the stored string has escapes or is not a string.
func TestImageDataLen(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int
	}{
		{`[{"type":"image","mimeType":"image/png","data":"QUJD"}]`, 4},
		{`[{"type":"image","mimeType":"image/png","data":"QU\/JD\u0041"}]`, 6},
		{`[{"type":"image","mimeType":"image/png","data":""}]`, 0},
		{`[{"type":"image","mimeType":"image/png","data":12345}]`, 0},
		{`[{"type":"image","mimeType":"image/png"}]`, 0},
		{`[{"type":"image","data":"AA==","data":"QUJDRA=="}]`, 8},
	} {
		bs := contentBlocks(rview(c.content))
		if len(bs) != 1 {
			t.Fatalf("%s: %d blocks", c.content, len(bs))
		}
		if got := bs[0].dataLen(); got != c.want || got != len(bs[0].data()) {
			t.Errorf("%s: dataLen %d, len(data) %d, want %d", c.content, got, len(bs[0].data()), c.want)
		}
	}
}

// TestBase64DataMatchesExpression checks base64Data against the regular
// expression it stands for.
func TestBase64DataMatchesExpression(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)
	cases := []string{"", "=", "==", "===", "QUJD", "QUI=", "QQ==", "QQ===", "A=B", "A==B", "QU JD", "QU\nJD", "QUJD\n",
		"é", "+/+/", "-_", "AAAA====", "a=", "=a", "\x00", strings.Repeat("QUJD", 10000) + "=="}
	for c := 0; c < 256; c++ {
		cases = append(cases, "AB"+string(rune(c))+"=", string([]byte{byte(c)}))
	}
	for _, s := range cases {
		if got, want := base64Data(s), re.MatchString(s); got != want {
			t.Errorf("base64Data(%q) = %v, the expression says %v", s, got, want)
		}
	}
}
