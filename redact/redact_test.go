package redact

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactString(t *testing.T) {
	t.Parallel()
	ghp := "ghp_" + strings.Repeat("aB3", 12)
	google := "AIza" + strings.Repeat("x9Y", 11) + "ab"
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----"
	cases := []struct {
		name, in, want string
	}{
		{"openai key", "key sk-proj-Abc123Def456Ghi789Jkl0 here", "key [REDACTED] here"},
		{"anthropic key", "sk-ant-api03-abcdefghijklmnopqrst", "[REDACTED]"},
		{"short sk- word", "the sk-learn package", "the sk-learn package"},
		{"github token", "token " + ghp, "token [REDACTED]"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijkl", "[REDACTED]"},
		{"slack", "xoxb-123456789012-abcdefghij", "[REDACTED]"},
		{"slack user", "xoxp-1234567890-abc", "[REDACTED]"},
		{"aws key id", "AKIAIOSFODNN7EXAMPLE", "[REDACTED]"},
		{"google key", "k=" + google, "k=[REDACTED]"},
		{"bearer", "Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED]"},
		{"bearer word", "the bearer instrument", "the bearer instrument"},
		{"password assignment", "password=hunter2", "password=[REDACTED]"},
		{"password json", `{"password": "hunter2"}`, `{"password": "[REDACTED]"}`},
		{"env token", "GITHUB_TOKEN=abc123 make", "GITHUB_TOKEN=[REDACTED] make"},
		{"secret key yaml", "SECRET_KEY: s3cr3t", "SECRET_KEY: [REDACTED]"},
		{"api_key single quotes", "api_key = 'xyz789'", "api_key = '[REDACTED]'"},
		{"two assignments", "user=bob password=pw1 token: tk2;", "user=bob password=[REDACTED] token: [REDACTED];"},
		{"bearer in json", `{"Authorization":"Bearer sk_live_0123456789"}`, `{"Authorization":"Bearer [REDACTED]"}`},
		{"empty value", `password=""`, `password=""`},
		{"max_tokens is not a token", "max_tokens: 4096", "max_tokens: 4096"},
		{"private key", "key:\n" + pem + "\nend", "key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nend"},
		{"unterminated private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]"},
		{"high entropy", "x aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD y", "x [REDACTED] y"},
		{"git sha", "3f786850e387550fdab836ed7e6dc881de23001b", "3f786850e387550fdab836ed7e6dc881de23001b"},
		{"uuid", "5e55c71d-0000-4000-8000-000000000001", "5e55c71d-0000-4000-8000-000000000001"},
		{"path", "/usr/local/lib/python3.11/site-packages/requests/adapters.py", "/usr/local/lib/python3.11/site-packages/requests/adapters.py"},
		{"prose", "The parser rejects CRLF input; strip the CR in parse().", "The parser rejects CRLF input; strip the CR in parse()."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := String(tc.in)
			if got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := String(got); again != got {
				t.Errorf("redacting twice gives %q, not %q", again, got)
			}
		})
	}
}

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	in := `{"role":"user","content":[{"type":"text","text":"use sk-proj-Abc123Def456Ghi789Jkl0"},{"type":"image","data":"aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sDaZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD","mimeType":"image/png"}],"nested":{"password":"hunter2","n":[1,true,null,"ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"]},"t\u00e9":"caf\u00e9"}`
	want := `{"role":"user","content":[{"type":"text","text":"use [REDACTED]"},{"type":"image","data":"aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sDaZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD","mimeType":"image/png"}],"nested":{"password":"hunter2","n":[1,true,null,"[REDACTED]"]},"t\u00e9":"caf\u00e9"}`
	got := string(redactJSON(nil, []byte(in), 0))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redactJSON (-want +got):\n%s", diff)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("redactJSON output is not valid JSON")
	}
}

func TestRedactEntropyPaths(t *testing.T) {
	t.Parallel()
	tok := "aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD"
	cases := []struct{ in, want string }{
		{"/Users/JaneDoe42/Qx7Service/internal/Zk9Handler/Main3.go", "/Users/JaneDoe42/Qx7Service/internal/Zk9Handler/Main3.go"},
		{"see /root/.pi/agent/Sessions42/--home-Dev9--/2026Z_Ab3Cd.jsonl", "see /root/.pi/agent/Sessions42/--home-Dev9--/2026Z_Ab3Cd.jsonl"},
		{"~/Work/Qx7Service/internal/Zk9Handler/Main3Z", "~/Work/Qx7Service/internal/Zk9Handler/Main3Z"},
		{"/tmp/" + tok + "/x", "/tmp/[REDACTED]/x"},
		{"token " + tok, "token [REDACTED]"},
		{"b64 AbC1/dEf2+GhI3/jKl4+MnO5/pQr6+StU7/vWx8", "b64 [REDACTED]"},
	}
	for _, tc := range cases {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	secret := "sk-proj-Abc123Def456Ghi789Jkl0"
	cases := []struct {
		name, in, want string
	}{
		{"header keeps what describes the file",
			`{"type":"session","version":3,"id":"aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/x/` + secret + `","note":"` + secret + `"}`,
			`{"type":"session","version":3,"id":"aZ3kQ9mW2xP7vB4nL8cR1tY6uE5oI0sD","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/x/` + secret + `","note":"[REDACTED]"}`},
		{"entry keeps its links, masks its content",
			`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"use ` + secret + `"}}`,
			`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"use [REDACTED]"}}`},
		{"a line ending is kept",
			`{"type":"custom","id":"a2","parentId":"a1","data":"password=hunter2"}` + "\n",
			`{"type":"custom","id":"a2","parentId":"a1","data":"password=[REDACTED]"}` + "\n"},
		{"a CRLF line ending is kept",
			`{"type":"custom","id":"a3","parentId":"a1","data":"x"}` + "\r\n",
			`{"type":"custom","id":"a3","parentId":"a1","data":"x"}` + "\r\n"},
		{"unknown members and key order survive",
			`{"zz":1,"type":"custom","id":"a4","parentId":"a1","aa":["token: abc123"]}`,
			`{"zz":1,"type":"custom","id":"a4","parentId":"a1","aa":["token: [REDACTED]"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Line([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Line (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLineFailsClosed checks that what cannot be masked is an error, with
// no line returned: a caller never gets the unmasked bytes back.
func TestLineFailsClosed(t *testing.T) {
	t.Parallel()
	secret := "sk-proj-Abc123Def456Ghi789Jkl0"
	for _, in := range []string{
		"",
		"\n",
		`"` + secret + `"`,
		`["` + secret + `"]`,
		`{"type":"message","id":"a1","message":"` + secret + `"`,
		`{"type":"message","id":"a1","message":"` + secret + `"}garbage`,
		`not json ` + secret,
	} {
		for name, f := range map[string]func([]byte) ([]byte, error){"Line": Line, "Header": Header, "Entry": Entry} {
			got, err := f([]byte(in))
			if err == nil || got != nil {
				t.Errorf("%s(%q) = %q, %v; want no line and an error", name, in, got, err)
				continue
			}
			if !errors.Is(err, ErrNotObject) {
				t.Errorf("%s(%q): error %v does not match ErrNotObject", name, in, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s(%q): the error repeats the secret: %v", name, in, err)
			}
		}
	}
}
