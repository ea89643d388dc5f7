package layout

import (
	"path"
	"runtime"
	"strings"
)

// This file holds what differs between operating systems: where the
// agents keep their stores on each, computed as their own code computes
// them, and the names Windows cannot hold. Nothing in pi's or AgentUse's
// layout depends on the system beyond the home directory and the path
// separator:
//
//   - pi (and indusagi): <home>/.pi/agent on Linux, macOS and Windows
//     alike (Node's os.homedir(): $HOME on Unix, %USERPROFILE% on
//     Windows), sessions/--<cwd>--/ with '/', '\' and ':' replaced by
//     '-', so C:\Users\x\proj is "--C--Users-x-proj--".
//   - AgentUse: $XDG_DATA_HOME, else <home>/.local/share, on every system
//     (not ~/Library/Application Support on macOS, not %APPDATA% on
//     Windows). Its project hash is taken from git's top level, which git
//     for Windows prints with forward slashes (C:/Users/x/proj), or from
//     the absolute path, with backslashes (C:\Users\x\proj): the same
//     project outside and inside git hashes differently, as in AgentUse.

// Locations are the default stores of the agents sessctl knows on one
// operating system.
type Locations struct {
	Pi           string // pi's agent directory (AgentDirFrom)
	Indusagi     string // indusagi's agent directory
	AgentUseData string // AgentUse's $DATA (AgentUseDataDirFrom)
}

// LocationsFor returns where the agents keep their stores on the system
// goos (a GOOS value) for a user whose environment is env and whose home
// directory is home, with goos's path separator. On the system sessctl
// runs on it agrees with AgentDirFrom and AgentUseDataDirFrom; for other
// systems it says what the agents do there.
func LocationsFor(goos string, env Env, home string) Locations {
	join := func(elem ...string) string { return JoinFor(goos, elem...) }
	expand := func(v string) string {
		if v == "~" {
			return home
		}
		if strings.HasPrefix(v, "~/") {
			return join(home, v[2:])
		}
		return v
	}
	var l Locations
	l.Pi = join(home, ".pi", "agent")
	if v := env("PI_CODING_AGENT_DIR"); v != "" {
		l.Pi = expand(v)
	}
	l.Indusagi = ""
	for _, k := range []string{"INDUSAGI_AGENT_DIR", "INDUSAGI_CODING_AGENT_DIR"} {
		if v := env(k); v != "" {
			l.Indusagi = expand(v)
			break
		}
	}
	if l.Indusagi == "" {
		base := join(home, ".indusagi")
		if v := env("INDUSAGI_DIR"); v != "" {
			base = expand(v)
		}
		l.Indusagi = join(base, "agent")
	}
	l.AgentUseData = join(home, ".local", "share")
	if v := env("XDG_DATA_HOME"); v != "" {
		l.AgentUseData = v
	}
	return l
}

// SessionDirFor returns pi's session directory for cwd under agentDir on
// the system goos: <agentDir>/sessions/<CwdDirName(cwd)>.
func SessionDirFor(goos, agentDir, cwd string) string {
	return JoinFor(goos, agentDir, "sessions", CwdDirName(cwd))
}

// JoinFor joins path elements as Node's path.join does on the system
// goos: with '\' on Windows (where '/' is a separator too, and a leading
// "\\" of a UNC path is kept), with '/' elsewhere. Empty elements are
// dropped and repeated separators collapsed; "." and ".." are resolved
// only outside Windows.
func JoinFor(goos string, elem ...string) string {
	if goos != "windows" {
		return path.Join(elem...)
	}
	var parts []string
	for _, e := range elem {
		if e != "" {
			parts = append(parts, e)
		}
	}
	s := strings.ReplaceAll(strings.Join(parts, `\`), "/", `\`)
	unc := strings.HasPrefix(s, `\\`)
	for strings.Contains(s, `\\`) {
		s = strings.ReplaceAll(s, `\\`, `\`)
	}
	if unc {
		s = `\` + s
	}
	if len(s) > 1 && strings.HasSuffix(s, `\`) && !(len(s) == 3 && s[1] == ':') {
		s = strings.TrimSuffix(s, `\`)
	}
	return s
}

// CheckNameFor is CheckName for the system goos. On Windows a name is
// also refused when the system could not create it or would take it for
// something else: one holding any of <>:"|?* or a control character, one
// ending in '.' or ' ' (which Windows strips, so that "a." names "a"),
// and a reserved device name (CON, PRN, AUX, NUL, COM0 to COM9, LPT0 to
// LPT9, their superscript-digit forms, CONIN$ and CONOUT$, in any case,
// alone or followed by an extension: "nul.jsonl" opens the null device).
func CheckNameFor(goos, s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
		return &nameError{s: s}
	}
	if goos == "windows" {
		if why := windowsNameProblem(s); why != "" {
			return &nameError{s: s, why: why}
		}
	}
	return nil
}

// CheckName returns ErrUnsafeName (wrapped, naming the value) when s cannot
// be used as a single path element: empty, ".", "..", or containing a path
// separator or NUL, and on Windows what CheckNameFor("windows", s) refuses.
func CheckName(s string) error { return CheckNameFor(runtime.GOOS, s) }

// windowsNameProblem says why Windows cannot hold s as a file name, or "".
func windowsNameProblem(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || strings.IndexByte(`<>:"|?*`, c) >= 0 {
			return "a character Windows does not allow in a file name"
		}
	}
	if c := s[len(s)-1]; c == '.' || c == ' ' {
		return "Windows strips a trailing dot or space"
	}
	base := s
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return "a device name on Windows"
	}
	if len(base) >= 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		switch d := base[3:]; d {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return "a device name on Windows"
		}
	}
	return ""
}
