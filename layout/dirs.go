package layout

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Agent names a family of JSONL session stores.
type Agent int

// The agents whose stores sessctl knows.
const (
	AgentPi       Agent = iota // pi: PI_CODING_AGENT_DIR, default ~/.pi/agent
	AgentIndusagi              // indusagi: INDUSAGI_AGENT_DIR, INDUSAGI_CODING_AGENT_DIR, INDUSAGI_DIR/agent, default ~/.indusagi/agent
)

// String returns the agent's name.
func (a Agent) String() string {
	if a == AgentIndusagi {
		return "indusagi"
	}
	return "pi"
}

// Env is the environment a resolver reads; os.Getenv in production.
type Env func(string) string

// ExpandHome expands a value of exactly "~" to home and a "~/" prefix to
// home plus the rest, as pi does for its agent directory variables.
func ExpandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// AgentDir resolves an agent's directory from the process environment.
func AgentDir(a Agent) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return AgentDirFrom(a, os.Getenv, home), nil
}

// AgentDirFrom resolves an agent's directory from env and a home directory.
// pi uses PI_CODING_AGENT_DIR when set and non-empty, else <home>/.pi/agent.
// indusagi uses the first set of INDUSAGI_AGENT_DIR and
// INDUSAGI_CODING_AGENT_DIR, else INDUSAGI_DIR (default <home>/.indusagi)
// with "agent" appended. Every variable gets "~" expansion.
func AgentDirFrom(a Agent, env Env, home string) string {
	switch a {
	case AgentIndusagi:
		for _, k := range []string{"INDUSAGI_AGENT_DIR", "INDUSAGI_CODING_AGENT_DIR"} {
			if v := env(k); v != "" {
				return ExpandHome(v, home)
			}
		}
		base := filepath.Join(home, ".indusagi")
		if v := env("INDUSAGI_DIR"); v != "" {
			base = ExpandHome(v, home)
		}
		return filepath.Join(base, "agent")
	default:
		if v := env("PI_CODING_AGENT_DIR"); v != "" {
			return ExpandHome(v, home)
		}
		return filepath.Join(home, ".pi", "agent")
	}
}

// SessionsDir returns <agentDir>/sessions, the root of every per-cwd
// session directory.
func SessionsDir(agentDir string) string { return filepath.Join(agentDir, "sessions") }

// CwdDirName returns the per-cwd directory name pi uses: remove one leading
// '/' or '\', replace every remaining '/', '\' and ':' with '-', and wrap
// the result in "--". The mapping is not injective ("/" and "" collide).
func CwdDirName(cwd string) string {
	if strings.HasPrefix(cwd, "/") || strings.HasPrefix(cwd, `\`) {
		cwd = cwd[1:]
	}
	r := strings.NewReplacer("/", "-", `\`, "-", ":", "-")
	return "--" + r.Replace(cwd) + "--"
}

// DefaultSessionDir returns <agentDir>/sessions/--<encoded cwd>--, with
// agentDir and cwd resolved first (ResolvePath), as pi 1.x does (0.73.1
// encoded cwd as given).
func DefaultSessionDir(agentDir, cwd string) string {
	return filepath.Join(SessionsDir(ResolvePath(agentDir)), CwdDirName(ResolvePath(cwd)))
}

// ResolvePath is pi 1.x's resolvePath: "~" and a "~/" prefix expanded to
// the home directory, a file:// URL turned into its path, then the path
// made absolute against the process's working directory and cleaned
// (trailing separators dropped). pi resolves every cwd it is given or
// reads from a header this way. A path that cannot be resolved (no
// working directory) is returned cleaned.
func ResolvePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil {
		p = ExpandHome(p, home)
	}
	if u, err := url.Parse(p); err == nil && u.Scheme == "file" && strings.HasPrefix(p, "file://") {
		p = filepath.FromSlash(u.Path)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return abs
}

// SessionFileName returns "<ts>_<id>.jsonl" where ts is the toISOString of
// t with ':' and '.' replaced by '-'.
func SessionFileName(t time.Time, id string) string {
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(isoTime(t))
	return ts + "_" + id + ".jsonl"
}

// IsSessionFileName reports whether a directory entry name is one the
// loaders consider: it ends in ".jsonl" (case-sensitive).
func IsSessionFileName(name string) bool { return strings.HasSuffix(name, ".jsonl") }

// ErrUnsafeName is returned for an id or name that could escape its
// directory: empty, ".", "..", or containing a path separator or NUL,
// and on Windows a name that system cannot hold (see CheckNameFor).
var ErrUnsafeName = errors.New("unsafe name")

type nameError struct{ s, why string }

func (e *nameError) Error() string {
	if e.why != "" {
		return "unsafe name " + strconv.Quote(e.s) + ": " + e.why
	}
	return "unsafe name " + strconv.Quote(e.s)
}
func (e *nameError) Unwrap() error { return ErrUnsafeName }
