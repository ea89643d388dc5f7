package migrate_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// TestStreamTrimsLikeTheLoader checks that the file rewrite of a
// write-mode open reads a file as the loader (and pi, which trims the whole
// text with JavaScript's whitespace) does. The rewrite used to refuse a
// header after a blank line and a byte order mark, and to drop a last
// entry followed by a no-break space, which the read-only open kept.
func TestStreamTrimsLikeTheLoader(t *testing.T) {
	t.Parallel()
	const hdr = `{"type":"session","id":"s"}`
	const msg = `{"type":"message","timestamp":"t","message":{"role":"user","content":"q"}}`
	cases := []struct {
		name      string
		in        string
		entries   int // entries written, headers excluded
		malformed int
	}{
		{"plain", hdr + "\n" + msg + "\n", 1, 0},
		{"blank lines and a byte order mark before the header", "\n \n\uFEFF" + hdr + "\n" + msg + "\n", 1, 0},
		{"line separator before the header", "\u2028" + hdr + "\n" + msg + "\n", 1, 0},
		{"no-break space after the unterminated last line", hdr + "\n" + msg + "\u00a0", 1, 0},
		{"no-break space and newlines after the last line", hdr + "\n" + msg + "\u00a0\n\u3000\n", 1, 0},
		{"no-break space after a line in the middle", hdr + "\n" + msg + "\u00a0\n" + msg + "\n", 1, 1},
		{"torn last line", hdr + "\n" + msg + "\n" + `{"type":"mess` + "\u00a0", 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			res, err := migrate.Stream(context.Background(), bytes.NewReader([]byte(tc.in)), &out)
			if err != nil {
				t.Fatal(err)
			}
			if res.Entries != tc.entries || res.Malformed != tc.malformed {
				t.Errorf("entries %d, malformed %d; want %d, %d", res.Entries, res.Malformed, tc.entries, tc.malformed)
			}
			mem, _, err := migrate.Entries(jsonl.ParseFile([]byte(tc.in)).Entries)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, e := range mem {
				want = append(want, string(e.Raw))
			}
			for _, e := range jsonl.ParseFile(out.Bytes()).Entries {
				got = append(got, string(e.Raw))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rewrite differs from the in-memory migration (-memory +rewrite):\n%s", diff)
			}
		})
	}
}
