package main

import (
	"regexp"
	"runtime"
	"strings"
)

// Paths under /TMP after tmpNorm, with '\' separators (plain or escaped
// in JSON) and, in command lines, shell-quoted for the backslashes.
var (
	tmpJSONPath   = regexp.MustCompile(`/TMP((?:\\\\[^\\"]+)+)`)
	tmpPlainPath  = regexp.MustCompile(`/TMP((?:\\[^\\\s'"]+)+)`)
	tmpQuotedPath = regexp.MustCompile(`'(/TMP[^'\s\\]*)'`)
)

// tmpNorm replaces the temporary directory tmp in s with /TMP, and on
// Windows also turns the paths under it into the Unix form the golden
// files hold: '/' separators, no JSON escapes, no shell quotes.
func tmpNorm(s, tmp string) string {
	if runtime.GOOS != "windows" {
		return strings.ReplaceAll(s, tmp, "/TMP")
	}
	s = strings.ReplaceAll(s, strings.ReplaceAll(tmp, `\`, `\\`), "/TMP")
	s = strings.ReplaceAll(s, tmp, "/TMP")
	s = tmpJSONPath.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, `\\`, "/") })
	s = tmpPlainPath.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, `\`, "/") })
	return tmpQuotedPath.ReplaceAllString(s, "$1")
}
