// Package redact masks likely secrets in session data: API keys, tokens,
// passwords, private keys and long random-looking strings are replaced by
// [REDACTED].
//
// String masks one text. Line masks one JSONL line of a pi session file
// (a header or an entry): it leaves alone what describes the file (types,
// ids, parent ids, times, the header's working directory and parent
// session), masks every other string value, keeps key order and the bytes
// of whatever it does not change, and never touches the data of an image
// block. Line fails closed: when it cannot vouch for its result it
// returns an error, never the line unmasked.
//
//	func share(line []byte) ([]byte, error) {
//		masked, err := redact.Line(line)
//		if err != nil {
//			return nil, err // never fall back to the unmasked line
//		}
//		return masked, nil
//	}
//
// What is masked:
//
//   - private keys: "-----BEGIN ... PRIVATE KEY-----" blocks (the body; the
//     BEGIN and END lines stay), to the end of the text when unterminated;
//   - assignments: the value after password, passwd, secret, token, apikey,
//     api_key, api-key, access_key, private_key (any case, with any prefix
//     and one "_word" suffix) followed by = or :, quoted or not;
//   - "Bearer <token>" (the token, when it has a digit or symbol);
//   - API key shapes: sk-..., ghp_/gho_/ghu_/ghs_/ghr_... and github_pat_...,
//     xoxa-/xoxb-/xoxp-/xoxo-/xoxr-/xoxs-..., AKIA/ASIA + 16, AIza + 35;
//   - long high-entropy tokens: runs of 32 or more of [A-Za-z0-9+/_=-]
//     that mix upper case, lower case and digits with at least 4.5 bits of
//     entropy per character (hex digests, UUIDs and paths are left alone; a
//     path is judged one component at a time).
//
// Redaction is a safety net, not a guarantee.
package redact
