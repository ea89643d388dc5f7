//go:build amd64 && !purego

package jsonl

import (
	"math/rand/v2"
	"testing"
)

// refScan is scanStringAVX2's contract written as a byte loop. Without
// canon: the index of the quote closing the string whose body continues
// at b[i], or -1 when the body is invalid before it or unterminated. With
// canon: the index of the closing quote, of a byte >= 0x80 or of the
// backslash of a \u escape, whichever comes first, or -1 when the body is
// not canonical before it (\/ is not) or has none of them.
func refScan(b []byte, i int, canon bool) int {
	for i < len(b) {
		switch c := b[i]; {
		case c == '"' || (canon && c >= 0x80):
			return i
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case '/':
				if canon {
					return -1
				}
				i += 2
			case 'u':
				if canon {
					return i
				}
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if hexVal(h) < 0 {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// checkScan compares scanStringAVX2 with refScan at b[i], and
// skipString with and without the assembly at the string that opens at
// b[i-1] (when that byte is a quote).
func checkScan(t *testing.T, b []byte, i int) {
	t.Helper()
	if len(b) >= 32 {
		if got, want := scanStringAVX2(b, i, false), refScan(b, i, false); got != want {
			t.Fatalf("scanStringAVX2(%q, %d, false) = %d, want %d", b, i, got, want)
		}
		if got, want := scanStringAVX2(b, i, true), refScan(b, i, true); got != want {
			t.Fatalf("scanStringAVX2(%q, %d, true) = %d, want %d", b, i, got, want)
		}
	}
	if i == 0 || b[i-1] != '"' {
		return
	}
	end, esc, err := skipString(b, i-1)
	cend, cesc, cok := canonStringEsc(b, i-1)
	useAVX2 = false
	wend, wesc, werr := skipString(b, i-1)
	wcend, wcesc, wcok := canonStringEsc(b, i-1)
	useAVX2 = true
	if end != wend || esc != wesc || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("skipString(%q, %d) = %d, %v, %v; the byte scan says %d, %v, %v", b, i-1, end, esc, err, wend, wesc, werr)
	}
	if cend != wcend || cesc != wcesc || cok != wcok {
		t.Fatalf("canonStringEsc(%q, %d) = %d, %v, %v; the byte scan says %d, %v, %v", b, i-1, cend, cesc, cok, wcend, wcesc, wcok)
	}
}

// randomBody appends a string body dense in escapes, runs of backslashes
// and bytes next to the classes the scan tells apart; with bad set, some
// pieces are invalid (bad escapes, short \u, control bytes, bare quotes).
func randomBody(r *rand.Rand, b []byte, n int, bad bool) []byte {
	good := []string{`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u00e9`, `\uD83D`, `\uAbCf`, `\u001f`, `\ud83d`, `\ude00`, `\ud83d\ude00`, "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x82", `\\\\`, `\\\"`, `u`, `0`, `F`, `g`, `/`, " ", "\x7f", "\xc3\xa9", "\xff", "'"}
	worse := []string{`\`, `\x`, `\u`, `\u12`, `\u12G4`, `\u"`, `\U0000`, "\x00", "\x1f", "\n", `"`, `\\"`, `\\\`, `\0`, `\a`}
	for len(b) < n {
		switch k := r.IntN(10); {
		case k < 4:
			for m := r.IntN(40); m > 0; m-- {
				b = append(b, 'a'+byte(r.IntN(26)))
			}
		case bad && k == 4:
			b = append(b, worse[r.IntN(len(worse))]...)
		default:
			b = append(b, good[r.IntN(len(good))]...)
		}
	}
	return b
}

// TestScanStringAVX2MatchesByteScan compares the assembly string scan with
// a byte loop on random strings: dense escapes, long backslash runs, bad
// escapes and control bytes, a closing quote at every offset from the
// start (so across the 32-byte block boundaries), and strings that end at
// or near the end of the buffer (the stack-copied last block).
func TestScanStringAVX2MatchesByteScan(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 30000; n++ {
		pre := r.IntN(40)
		b := make([]byte, 0, 256)
		for range pre {
			b = append(b, 'p')
		}
		b = append(b, '"')
		b = randomBody(r, b, pre+1+r.IntN(160), r.IntN(3) == 0)
		switch r.IntN(4) {
		case 0: // unterminated
		case 1:
			b = append(b, '"')
		default:
			b = append(b, '"')
			for m := r.IntN(40); m > 0; m-- {
				b = append(b, `"\ax,}`[r.IntN(6)])
			}
		}
		checkScan(t, b, pre+1)
		// Every other start inside the body, and every cut of the buffer.
		i := pre + 1 + r.IntN(len(b)-pre)
		checkScan(t, b[:r.IntN(len(b)+1-pre-1)+pre+1], pre+1)
		if i < len(b) {
			checkScan(t, b, i)
		}
	}
}

// TestScanStringAVX2BlockEdges puts a backslash run and a closing quote at
// each offset around the block boundaries.
func TestScanStringAVX2BlockEdges(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	for _, esc := range []string{`\`, `\\`, `\\\`, `\"`, `\u`, `\u0`, `\u00`, `\u004`, `\u0041`, `\n`, "\x01"} {
		for pos := 0; pos < 100; pos++ {
			for tailLen := 0; tailLen < 3; tailLen++ {
				b := []byte{'"'}
				for len(b) < 1+pos {
					b = append(b, 'a')
				}
				b = append(b, esc...)
				for q := 0; q < 70; q += 7 {
					c := append([]byte(nil), b...)
					for len(c) < len(b)+q {
						c = append(c, 'b')
					}
					c = append(c, '"')
					for range tailLen * 20 {
						c = append(c, 'z')
					}
					checkScan(t, c, 1)
					checkScan(t, c[:len(c)-1], 1)
				}
			}
		}
	}
}

// TestNextSpecialAVX2 compares the block scan with nextSpecial: a special
// byte ('"', '\\', a control byte, next to bytes >= 0x80 and DEL, which are
// not) at every offset from the start, in buffers cut at every length
// around it: the scan must return the special byte's index or, when the
// whole blocks hold none, the first block that runs past the end, from
// where nextSpecial finds what it finds from the start.
func TestNextSpecialAVX2(t *testing.T) {
	t.Parallel()
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	filler := []byte("ab\x80\xff\x7f\xc3\xa9 ~")
	for _, sp := range []byte{'"', '\\', 0, '\n', 0x1f} {
		for start := 0; start < 3; start++ {
			for pos := start; pos < 110; pos++ {
				b := make([]byte, 0, 160)
				for len(b) < pos {
					b = append(b, filler[len(b)%len(filler)])
				}
				b = append(b, sp)
				for len(b) < 150 {
					b = append(b, '"')
				}
				for n := start; n <= len(b); n++ {
					c := b[:n]
					if start+32 > n {
						continue // the caller's condition
					}
					got := nextSpecialAVX2(c, start)
					want := nextSpecial(c, start)
					if got == want && want < n {
						continue // found
					}
					if got < start || got > want || (got-start)%32 != 0 || got+32 <= n || nextSpecial(c, got) != want {
						t.Fatalf("nextSpecialAVX2(%q, %d) = %d: neither %d nor the first block past the end", c, start, got, want)
					}
				}
			}
		}
	}
}

// FuzzScanStringAVX2 compares the assembly string scan with a byte loop.
func FuzzScanStringAVX2(f *testing.F) {
	f.Add([]byte(`"abc\n\"\\\u00e9def"`), uint8(1))
	f.Add([]byte(`"`+string(make([]byte, 40))+`"`), uint8(1))
	f.Add([]byte(`"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"`), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, off uint8) {
		if !useAVX2 {
			t.Skip("no AVX2")
		}
		if i := int(off); i <= len(b) {
			checkScan(t, b, i)
		}
	})
}
