package textindex

import "unicode/utf8"

// TokenizeSpans calls fn with each term of text in order, as Tokenize
// cuts them, and the byte range [start, end) of the token in text: from
// its first character to the end of its last (a dropped combining mark
// included). It is slower than Tokenize; snippets use it to mark
// matches. The slice passed to fn is only valid during the call.
func TokenizeSpans(text string, fn func(term []byte, start, end int)) {
	var buf [MaxTermLen + utf8.UTFMax]byte
	tok := buf[:0]
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		var f rune
		size := 1
		if c < utf8.RuneSelf {
			if a := asciiFold[c]; a != 0 {
				f = rune(a)
			} else {
				f = -1
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			f = foldRune(r)
		}
		if f < 0 {
			if start >= 0 {
				fn(tok, start, i)
				tok, start = tok[:0], -1
			}
			i += size
			continue
		}
		if start < 0 {
			start = i
		}
		if f > 0 && len(tok)+utf8.RuneLen(f) <= MaxTermLen {
			tok = utf8.AppendRune(tok, f)
		}
		i += size
	}
	if start >= 0 {
		fn(tok, start, len(text))
	}
}
