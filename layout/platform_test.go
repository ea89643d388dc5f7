package layout_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessctl/sessctl/layout"
)

// TestLocationsFor checks where pi, indusagi and AgentUse keep their
// stores on each system, as their sources compute it (pi's getAgentDir,
// AgentUse's getXdgDataDir: the same rules everywhere, joined with the
// system's separator).
func TestLocationsFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		goos, home string
		env        map[string]string
		want       layout.Locations
	}{
		{"linux", "/home/x", nil, layout.Locations{
			Pi: "/home/x/.pi/agent", Indusagi: "/home/x/.indusagi/agent", AgentUseData: "/home/x/.local/share"}},
		{"darwin", "/Users/x", nil, layout.Locations{
			Pi: "/Users/x/.pi/agent", Indusagi: "/Users/x/.indusagi/agent", AgentUseData: "/Users/x/.local/share"}},
		{"freebsd", "/usr/home/x", nil, layout.Locations{
			Pi: "/usr/home/x/.pi/agent", Indusagi: "/usr/home/x/.indusagi/agent", AgentUseData: "/usr/home/x/.local/share"}},
		{"windows", `C:\Users\x`, nil, layout.Locations{
			Pi: `C:\Users\x\.pi\agent`, Indusagi: `C:\Users\x\.indusagi\agent`, AgentUseData: `C:\Users\x\.local\share`}},
		{"windows", `C:\Users\x`, map[string]string{
			"PI_CODING_AGENT_DIR": "~/pi", "INDUSAGI_DIR": `D:\ind`, "XDG_DATA_HOME": `D:\data`,
		}, layout.Locations{Pi: `C:\Users\x\pi`, Indusagi: `D:\ind\agent`, AgentUseData: `D:\data`}},
		{"windows", `\\server\home\x`, map[string]string{"INDUSAGI_AGENT_DIR": "~"}, layout.Locations{
			Pi: `\\server\home\x\.pi\agent`, Indusagi: `\\server\home\x`, AgentUseData: `\\server\home\x\.local\share`}},
		{"darwin", "/Users/x", map[string]string{"PI_CODING_AGENT_DIR": `~\pi`}, layout.Locations{ // only "~/" is expanded
			Pi: `~\pi`, Indusagi: "/Users/x/.indusagi/agent", AgentUseData: "/Users/x/.local/share"}},
	}
	for _, c := range cases {
		got := layout.LocationsFor(c.goos, func(k string) string { return c.env[k] }, c.home)
		if got != c.want {
			t.Errorf("LocationsFor(%s, %v, %s) = %+v, want %+v", c.goos, c.env, c.home, got, c.want)
		}
	}
}

// TestSessionDirFor checks pi's per-cwd directory on each system: pi
// removes one leading separator and replaces every '/', '\' and ':'.
func TestSessionDirFor(t *testing.T) {
	t.Parallel()
	cases := []struct{ goos, agentDir, cwd, want string }{
		{"windows", `C:\Users\x\.pi\agent`, `C:\Users\x\proj`, `C:\Users\x\.pi\agent\sessions\--C--Users-x-proj--`},
		{"windows", `C:\Users\x\.pi\agent`, `\\server\share\proj`, `C:\Users\x\.pi\agent\sessions\---server-share-proj--`},
		{"windows", `C:\Users\x\.pi\agent`, `C:\`, `C:\Users\x\.pi\agent\sessions\--C----`},
		{"darwin", "/Users/x/.pi/agent", "/Users/x/My Project", "/Users/x/.pi/agent/sessions/--Users-x-My Project--"},
		{"linux", "/home/x/.pi/agent", "/", "/home/x/.pi/agent/sessions/----"},
	}
	for _, c := range cases {
		if got := layout.SessionDirFor(c.goos, c.agentDir, c.cwd); got != c.want {
			t.Errorf("SessionDirFor(%s, %s, %s) = %s, want %s", c.goos, c.agentDir, c.cwd, got, c.want)
		}
	}
}

// TestLocationsOfThisSystem checks that the resolvers sessctl runs with
// agree with LocationsFor for the system they run on (under wine, with
// Windows paths), and that the home directory is the one the agents use:
// %USERPROFILE% on Windows (Node's os.homedir()), $HOME elsewhere.
func TestLocationsOfThisSystem(t *testing.T) {
	home, err := filepath.Abs("home")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{
		nil,
		{"PI_CODING_AGENT_DIR": "~/p", "INDUSAGI_DIR": "~", "XDG_DATA_HOME": filepath.Join(home, "data")},
	} {
		get := func(k string) string { return env[k] }
		want := layout.LocationsFor(runtime.GOOS, get, home)
		got := layout.Locations{
			Pi:           layout.AgentDirFrom(layout.AgentPi, get, home),
			Indusagi:     layout.AgentDirFrom(layout.AgentIndusagi, get, home),
			AgentUseData: layout.AgentUseDataDirFrom(get, home),
		}
		if got != want {
			t.Errorf("env %v: resolvers give %+v, LocationsFor(%s) %+v", env, got, runtime.GOOS, want)
		}
		cwd := filepath.Join(home, "proj")
		if got, want := layout.DefaultSessionDir(got.Pi, cwd), layout.SessionDirFor(runtime.GOOS, got.Pi, cwd); got != want {
			t.Errorf("DefaultSessionDir = %s, SessionDirFor = %s", got, want)
		}
	}

	t.Setenv("PI_CODING_AGENT_DIR", "")
	t.Setenv("XDG_DATA_HOME", "")
	homeVar := "HOME"
	if runtime.GOOS == "windows" {
		homeVar = "USERPROFILE"
	}
	h := os.Getenv(homeVar)
	if h == "" {
		t.Skipf("%s is not set", homeVar)
	}
	if got, err := layout.AgentDir(layout.AgentPi); err != nil || got != filepath.Join(h, ".pi", "agent") {
		t.Errorf("AgentDir(pi) = %s, %v; want %%%s%%\\.pi\\agent = %s", got, err, homeVar, filepath.Join(h, ".pi", "agent"))
	}
	if got, err := layout.AgentUseDataDir(); err != nil || got != filepath.Join(h, ".local", "share") {
		t.Errorf("AgentUseDataDir() = %s, %v; want %s", got, err, filepath.Join(h, ".local", "share"))
	}
	t.Logf("%s: pi in %s", runtime.GOOS, filepath.Join(h, ".pi", "agent"))
}

// TestCheckNameFor checks the names refused on each system: Windows
// cannot hold device names, trailing dots and spaces, and some
// characters, which are ordinary names elsewhere.
func TestCheckNameFor(t *testing.T) {
	t.Parallel()
	both := []string{"", ".", "..", "a/b", `a\b`, "a\x00b"}
	windowsOnly := []string{
		"CON", "con", "nul.jsonl", "NUL .txt", "Aux", "prn.x.y", "COM1", "com9.json", "LPT0", "COM¹", "lpt³.txt",
		"CONIN$", "conout$", "a.", "a ", "a:b", "a*b", "a?b", `a"b`, "a<b", "a>b", "a|b", "a\tb", "a\x1fb",
	}
	fine := []string{"a", "console", "nullable.jsonl", "COM10", "LPT", "COMX", "com", ".hidden", "a b", "01HQ-x.jsonl",
		"2024-01-02T03-04-05-678Z_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"}
	for _, goos := range []string{"linux", "darwin", "freebsd", "windows"} {
		for _, s := range both {
			if err := layout.CheckNameFor(goos, s); !errors.Is(err, layout.ErrUnsafeName) {
				t.Errorf("CheckNameFor(%s, %q) = %v, want ErrUnsafeName", goos, s, err)
			}
		}
		for _, s := range windowsOnly {
			err := layout.CheckNameFor(goos, s)
			if goos == "windows" && !errors.Is(err, layout.ErrUnsafeName) {
				t.Errorf("CheckNameFor(windows, %q) = %v, want ErrUnsafeName", s, err)
			}
			if goos != "windows" && err != nil {
				t.Errorf("CheckNameFor(%s, %q) = %v, want nil", goos, s, err)
			}
		}
		for _, s := range fine {
			if err := layout.CheckNameFor(goos, s); err != nil {
				t.Errorf("CheckNameFor(%s, %q) = %v, want nil", goos, s, err)
			}
		}
	}
	if err := layout.CheckNameFor("windows", "nul.jsonl"); err == nil || err.Error() != `unsafe name "nul.jsonl": a device name on Windows` {
		t.Errorf("message: %v", err)
	}
	if err := layout.CheckName("CON"); (err != nil) != (runtime.GOOS == "windows") {
		t.Errorf("CheckName(CON) on %s: %v", runtime.GOOS, err)
	}
}
