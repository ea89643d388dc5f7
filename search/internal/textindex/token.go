package textindex

import (
	"unicode"
	"unicode/utf8"
)

// MaxTermLen is the longest term kept, in bytes: a longer token is cut
// to its first MaxTermLen bytes (at a rune boundary), at indexing and at
// query time alike, so that a query for the whole token still finds it.
const MaxTermLen = 128

// asciiFold maps an ASCII byte to its lower-case form when it is a
// letter or digit, and to 0 when it separates tokens.
var asciiFold = func() (t [128]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = byte(c)
		t[c-'a'+'A'] = byte(c)
	}
	return t
}()

// foldRune returns the folded form of a non-ASCII rune that belongs to a
// token, or -1 when r separates tokens, or 0 when r is a combining mark
// that belongs to the token but is dropped (a decomposed diacritic).
func foldRune(r rune) rune {
	switch {
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.No, r):
		return removeDiacritic(unicode.ToLower(r))
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r):
		return 0
	case unicode.Is(unicode.Co, r):
		return r
	}
	return -1
}

// removeDiacritic maps the Latin letters with a diacritic of Latin-1
// Supplement and Latin Extended-A (U+00C0-U+017F, lower-cased first) to
// their base letter, as FTS5's remove_diacritics does for them. Letters
// without a canonical decomposition (æ, ø, ð, þ, ß, đ, ħ, ı, ł, œ, ...)
// are kept.
func removeDiacritic(r rune) rune {
	if r < 0xe0 || r > 0x17f {
		return r
	}
	if b := latinBase[r-0xe0]; b != ' ' {
		return rune(b)
	}
	return r
}

// latinBase holds the base letter of U+00E0-U+017F, ' ' for none; it is
// spelled as runs of a letter and a count.
var latinBase = func() []byte {
	const runs = "a6 1c1e4i4 1n1o5 2u4y1 1y1" + // U+00E0-U+00FF
		"a6c8d2 2e10g8h2 2i9 3j2k2 1l6 4n6 3o6 2r6s8t4 2u12w2y3z6 1" // U+0100-U+017F
	var out []byte
	for i := 0; i < len(runs); {
		c := runs[i]
		i++
		n := 0
		for i < len(runs) && runs[i] >= '0' && runs[i] <= '9' {
			n = n*10 + int(runs[i]-'0')
			i++
		}
		for range n {
			out = append(out, c)
		}
	}
	return out
}()

// Tokenize calls fn with each term of text in order, as the index sees
// them (see the package documentation). The slice passed to fn is only
// valid during the call.
func Tokenize(text string, fn func(term []byte)) {
	var buf [MaxTermLen + utf8.UTFMax]byte
	tokenize(text, buf[:0], fn)
}

func tokenize(text string, buf []byte, fn func(term []byte)) {
	if cap(buf) < MaxTermLen+utf8.UTFMax {
		buf = make([]byte, 0, MaxTermLen+utf8.UTFMax)
	}
	// The term is built in place in an array of fixed size, so that the
	// ASCII path (most bytes) is a table lookup and a store.
	tok := (*[MaxTermLen + utf8.UTFMax]byte)(buf[:MaxTermLen+utf8.UTFMax])
	n := 0
	in := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if f := asciiFold[c&0x7f]; f != 0 {
				in = true
				if n < MaxTermLen {
					tok[n] = f
					n++
				}
				continue
			}
			if in {
				fn(tok[:n])
				n, in = 0, false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		f := foldRune(r)
		if f < 0 {
			if in {
				fn(tok[:n])
				n, in = 0, false
			}
			continue
		}
		in = true
		if f == 0 {
			continue
		}
		if n+utf8.RuneLen(f) <= MaxTermLen {
			n += utf8.EncodeRune(tok[n:], f)
		}
	}
	if in {
		fn(tok[:n])
	}
}

// Terms returns the terms of text (see Tokenize), for queries.
func Terms(text string) []string {
	var out []string
	Tokenize(text, func(t []byte) { out = append(out, string(t)) })
	return out
}
