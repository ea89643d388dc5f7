package layout

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout/vfs"
)

// The expected names below come from AgentUse's sanitizeAgentName run in
// Node 20 (the spec's vectors plus hostile and Unicode edge cases).
func TestSanitizeAgentName(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"manager", "manager"},
		{"agents/manager", "agents-manager"},
		{"agents/Kitchen Sink", "agents-kitchen-sink"},
		{"Daily Report Ünïcode!", "daily-report-n-code"},
		{"ÉCOLE", "cole"},
		{"日本語エージェント", "default"},
		{"", "default"},
		{"   ", "default"},
		{"\u00a0\u3000", "default"},
		{"\ufeff", "default"},
		{"__x__", "__x__"},
		{"-_-", "_"},
		{"a..b", "a-b"},
		{"../other/agent", "other-agent"},
		{"My.Agent.v2", "my-agent-v2"},
		{"UPPER_case-Mix", "upper_case-mix"},
		{"emoji😀agent", "emoji-agent"},
		{"social/quotes/1-quotes-create", "social-quotes-1-quotes-create"},
		{"İstanbul", "i-stanbul"},
		{"İİ", "i-i"},
		{"İ-", "i"},
		{"-İ", "i"},
		{"Kelvin\u212A", "kelvink"},
		{"\u212A\u212A", "kk"},
		{"ß", "default"},
		{"ǅungla", "ungla"},
		{"ΣΑΣ", "default"},
		{"x\u0301y", "x-y"},
		{"ﬀ", "default"},
		{"Ａｇｅｎｔ", "default"},
		{"a\u2028b", "a-b"},
		{"--x--", "x"},
		{"../../etc/passwd", "etc-passwd"},
		{"..", "default"},
		{"a/../../b", "a-b"},
		{"\x00evil", "evil"},
		{`C:\Windows\System32`, "c-windows-system32"},
		{"bad\xffutf8", "bad-utf8"},
	}
	for _, c := range cases {
		if got := SanitizeAgentName(c.in); got != c.want {
			t.Errorf("SanitizeAgentName(%q) = %q, want %q", c.in, got, c.want)
		}
		// The function is idempotent, and its result is a safe path element.
		got := SanitizeAgentName(c.in)
		if again := SanitizeAgentName(got); again != got {
			t.Errorf("SanitizeAgentName(%q) = %q, not idempotent", got, again)
		}
		if err := CheckName(got); err != nil {
			t.Errorf("SanitizeAgentName(%q) = %q: %v", c.in, got, err)
		}
	}
}

func TestAgentUseProjectHash(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"/home/dev/demo-project", "a451240a36c0c105"},
		{"/home/dev/demo-project/", "2614c1e09088c6fc"},
		{"/home/dev/scratch-agents", "7fa0b5443ea9e42b"},
		{"/home/dev/e2e-project", "edb07f2a96b085fe"},
		{"C:/Users/dev/demo-project", "c5aec1ddc32de53d"},
		{"/home/dev/démo", "6a317955443e6764"},
	}
	for _, c := range cases {
		if got := AgentUseProjectHash(c.in); got != c.want {
			t.Errorf("AgentUseProjectHash(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAgentUseDataDirFrom(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg set", map[string]string{"XDG_DATA_HOME": "/x/data"}, "/x/data"},
		{"xdg relative kept", map[string]string{"XDG_DATA_HOME": "rel/data"}, "rel/data"},
		{"xdg empty", map[string]string{"XDG_DATA_HOME": ""}, filepath.Join("/home/me", ".local", "share")},
		{"xdg unset", nil, filepath.Join("/home/me", ".local", "share")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := AgentUseDataDirFrom(func(k string) string { return c.env[k] }, "/home/me")
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	t.Run("process environment", func(t *testing.T) {
		t.Setenv("XDG_DATA_HOME", "/from/env")
		got, err := AgentUseDataDir()
		if err != nil || got != "/from/env" {
			t.Errorf("AgentUseDataDir() = %q, %v; want /from/env", got, err)
		}
	})
}

func TestAgentUseHashSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.FromSlash(p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	noRepo := func(context.Context, string) (string, error) { return "", errors.New("not a git repository") }
	var seen string
	repo := func(_ context.Context, dir string) (string, error) {
		seen = dir
		return "  /home/dev/demo-project\n", nil
	}
	cases := []struct {
		name string
		root string
		git  GitTopLevel
		want string
	}{
		{"git top level trimmed", "/home/dev/demo-project/packages/app", repo, "/home/dev/demo-project"},
		{"no repo: cleaned path", "/home/dev//scratch-agents/./x/../", noRepo, "/home/dev/scratch-agents"},
		{"no git at all", "/home/dev/scratch-agents", nil, "/home/dev/scratch-agents"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AgentUseHashSource(ctx, c.root, c.git)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if c.git == nil || c.name != "git top level trimmed" {
				// On Windows "/home/dev" is on the current drive.
				want = abs(c.want)
			}
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	if seen != abs("/home/dev/demo-project/packages/app") {
		t.Errorf("git ran in %q, want the absolute state root", seen)
	}
}

// TestGitShowTopLevel runs the real git when it is installed: inside a
// fresh repository the top level is found from a subdirectory, outside one
// AgentUseHashSource falls back to the path.
func TestGitShowTopLevel(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := GitShowTopLevel(ctx, dir); err == nil {
		t.Skip("the temporary directory is inside a git work tree")
	}
	got, err := AgentUseHashSource(ctx, dir, GitShowTopLevel)
	if err != nil || got != dir {
		t.Fatalf("outside git: got %q, %v; want %q", got, err, dir)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, "nogitconfig"))
	if err := runGit(ctx, dir, "init", "-q"); err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	sub := filepath.Join(dir, "packages", "app")
	if err := vfs.OS().MkdirAll(sub, vfs.DirMode); err != nil {
		t.Fatal(err)
	}
	got, err = AgentUseHashSource(ctx, sub, GitShowTopLevel)
	if err != nil || got != filepath.ToSlash(dir) && got != dir {
		t.Fatalf("inside git: got %q, %v; want %q", got, err, dir)
	}
}

func runGit(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	return cmd.Run()
}

func TestAgentUseIDs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id   string
		want bool
	}{
		{"01M7ZXJ093A1K5TPE8N7MS01CN", true},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", true},
		{"01m7zxj093a1k5tpe8n7ms01cn", false}, // lower case
		{"01M7ZXJ093A1K5TPE8N7MS01C", false},  // 25
		{"01M7ZXJ093A1K5TPE8N7MS01CNX", false},
		{"01M7ZXJ093A1K5TPE8N7MS01CI", false}, // I is not Crockford
		{"01M7ZXJ093A1K5TPE8N7MS01CU", false},
		{"01M7ZXJ093A1K5TPE8N7MS/1CN", false},
		{"../../../../../../../../..", false},
		{"01M7ZXJ093A1K5TPE8N7MS01C\x00", false},
		{"", false},
	}
	for _, c := range cases {
		if got := IsAgentUseID(c.id); got != c.want {
			t.Errorf("IsAgentUseID(%q) = %v, want %v", c.id, got, c.want)
		}
		err := CheckAgentUseID(c.id)
		if (err == nil) != c.want {
			t.Errorf("CheckAgentUseID(%q) = %v", c.id, err)
		}
		if err != nil && (!errors.Is(err, ErrBadID) || !errors.Is(err, ErrUnsafeName)) {
			t.Errorf("CheckAgentUseID(%q) = %v: does not match ErrBadID and ErrUnsafeName", c.id, err)
		}
	}
}

func TestAgentUsePaths(t *testing.T) {
	t.Parallel()
	const sid, mid, pid = "01M7ZXJ093A1K5TPE8N7MS01CN", "01M7ZXJ097NY47W4P7E5X53TK7", "01M7ZXJ09CPXSR6AGN7KR6KS7W"
	name, err := AgentUseSessionDirName(sid, "agents/manager")
	if err != nil || name != sid+"-agents-manager" {
		t.Errorf("AgentUseSessionDirName = %q, %v", name, err)
	}
	child, err := AgentUseSubagentPath("/s/"+name, pid, "../../../x")
	if want := filepath.Join("/s", name, "subagent", pid+"-x"); err != nil || child != want {
		t.Errorf("AgentUseSubagentPath = %q, %v; want %q", child, err, want)
	}
	if _, err := AgentUseSessionDirName(sid, strings.Repeat("a", 300)); !errors.Is(err, ErrUnsafeName) {
		t.Errorf("long agent name: %v, want ErrUnsafeName", err)
	}
	for _, bad := range []string{"..", "../" + sid, sid + "/..", "", sid + "\x00"} {
		if _, err := AgentUseSessionDirName(bad, "a"); err == nil {
			t.Errorf("AgentUseSessionDirName(%q) accepted", bad)
		}
		if _, err := AgentUseMessagePath("/s", bad); err == nil {
			t.Errorf("AgentUseMessagePath(%q) accepted", bad)
		}
		if _, err := AgentUsePartPath("/s", mid, bad); err == nil {
			t.Errorf("AgentUsePartPath(%q) accepted", bad)
		}
		if _, err := AgentUseArtifactName("bash", bad, "txt"); err == nil {
			t.Errorf("AgentUseArtifactName(%q) accepted", bad)
		}
	}
	p, err := AgentUsePartPath("/s", mid, pid)
	if want := filepath.Join("/s", mid, "part", pid+".json"); err != nil || p != want {
		t.Errorf("AgentUsePartPath = %q, %v", p, err)
	}
	a, err := AgentUseArtifactName("tools__filesystem_read", pid, "json")
	if want := "tool-output-tools__filesystem_read-" + pid + ".json"; err != nil || a != want {
		t.Errorf("AgentUseArtifactName = %q, %v", a, err)
	}
	a, _ = AgentUseArtifactName(strings.Repeat("x", 60), pid, "txt")
	if want := "tool-output-" + strings.Repeat("x", 48) + "-" + pid + ".txt"; a != want {
		t.Errorf("long tool name: %q, want %q", a, want)
	}
	if _, err := AgentUseArtifactName("x", pid, "sh"); err == nil {
		t.Error("AgentUseArtifactName accepted extension sh")
	}

	split := []struct {
		name, id, agent string
		ok              bool
	}{
		{sid + "-agents-manager", sid, "agents-manager", true},
		{sid + "-a-b", sid, "a-b", true},
		{sid + "-", "", "", false},
		{sid, "", "", false},
		{"notanid-agent", "", "", false},
	}
	for _, c := range split {
		id, agent, ok := SplitAgentUseDirName(c.name)
		if diff := cmp.Diff([]any{c.id, c.agent, c.ok}, []any{id, agent, ok}); diff != "" {
			t.Errorf("SplitAgentUseDirName(%q) (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestIsAgentUseDataFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want bool
	}{
		{"session.json", true},
		{"01M7ZXJ09CPXSR6AGN7KR6KS7W.json", true},
		{"session.json.1234.6b1f.tmp", false},
		{"session.json.tmp-0011223344556677", false},
		{AgentUseLockFile, false},
		{"session.owner", false},
		{"session.lock.excl", false},
	}
	for _, c := range cases {
		if got := IsAgentUseDataFile(c.name); got != c.want {
			t.Errorf("IsAgentUseDataFile(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
