package layout_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
)

// TestResolvePlaces checks the one vocabulary of places: each store name
// and a directory, against an environment of the test's.
func TestResolvePlaces(t *testing.T) {
	t.Parallel()
	home := filepath.FromSlash("/home/x")
	env := func(m map[string]string) layout.Env { return func(k string) string { return m[k] } }
	j := filepath.Join
	pi := layout.Place{Name: "pi", Format: layout.FormatJSONL, Root: j(home, ".pi", "agent", "sessions")}
	ind := layout.Place{Name: "indusagi", Format: layout.FormatJSONL, Root: j(home, ".indusagi", "agent", "sessions")}
	au := layout.Place{Name: "agentuse", Format: layout.FormatAgentUse, Root: j(home, ".local", "share", "agentuse", "project")}
	dir := func(name, root string) []layout.Place {
		return []layout.Place{{Name: name, Format: layout.FormatJSONL, Root: root}, {Name: name, Format: layout.FormatAgentUse, Root: root}}
	}
	cases := []struct {
		name string
		env  map[string]string
		want []layout.Place
	}{
		{"", nil, []layout.Place{pi}},
		{"pi", nil, []layout.Place{pi}},
		{"indusagi", nil, []layout.Place{ind}},
		{"agentuse", nil, []layout.Place{au}},
		{"all", nil, []layout.Place{pi, ind, au}},
		{"pi", map[string]string{"PI_CODING_AGENT_DIR": "~/p"}, []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: j(home, "p", "sessions")}}},
		{"agentuse", map[string]string{"XDG_DATA_HOME": j(home, "d")}, []layout.Place{{Name: "agentuse", Format: layout.FormatAgentUse, Root: j(home, "d", "agentuse", "project")}}},
		{"all", map[string]string{"INDUSAGI_DIR": j(home, "i"), "XDG_DATA_HOME": j(home, "d")}, []layout.Place{pi,
			{Name: "indusagi", Format: layout.FormatJSONL, Root: j(home, "i", "agent", "sessions")},
			{Name: "agentuse", Format: layout.FormatAgentUse, Root: j(home, "d", "agentuse", "project")}}},
		{j(home, "s"), nil, dir(j(home, "s"), j(home, "s"))},
		{j(home, "s") + string(filepath.Separator), nil, dir(j(home, "s")+string(filepath.Separator), j(home, "s"))},
		{"./s", nil, dir("./s", "s")},
		{"..", nil, dir("..", "..")},
		{".", nil, dir(".", ".")},
		{"s/t", nil, dir("s/t", j("s", "t"))},
		{"~/s", nil, dir("~/s", j(home, "s"))},
	}
	for _, c := range cases {
		got, err := layout.ResolvePlacesFrom(c.name, env(c.env), home)
		if err != nil {
			t.Errorf("ResolvePlacesFrom(%q, %v): %v", c.name, c.env, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("ResolvePlacesFrom(%q, %v) (-want +got):\n%s", c.name, c.env, d)
		}
	}
}

// TestResolvePlacesUnknown checks that a bare word that is no store name
// is refused with ErrUnknownPlace naming it, not taken for a directory.
func TestResolvePlacesUnknown(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pii", "PI", "sessions", "agent-use", "All"} {
		ps, err := layout.ResolvePlacesFrom(name, func(string) string { return "" }, "/home/x")
		var ue *layout.UnknownPlaceError
		if !errors.Is(err, layout.ErrUnknownPlace) || !errors.As(err, &ue) || ue.Name != name {
			t.Errorf("ResolvePlacesFrom(%q) = %v, %v; want an UnknownPlaceError matching ErrUnknownPlace", name, ps, err)
		}
		if layout.IsPlaceName(name) != true {
			t.Errorf("IsPlaceName(%q) = false", name)
		}
	}
	for _, d := range []string{"./sessions", "/tmp/x", "~", "~/x", "a/b", "..", "."} {
		if layout.IsPlaceName(d) {
			t.Errorf("IsPlaceName(%q) = true; want a directory", d)
		}
	}
}

// TestMachinePlaces checks that the machine's places are the named ones,
// in the order of "all", and that Places picks a format out of them.
func TestMachinePlaces(t *testing.T) {
	t.Setenv("PI_CODING_AGENT_DIR", "/tmp/pi-agent")
	t.Setenv("INDUSAGI_AGENT_DIR", "/tmp/ind-agent")
	t.Setenv("XDG_DATA_HOME", "/tmp/data")
	got, err := layout.MachinePlaces()
	if err != nil {
		t.Fatal(err)
	}
	all, err := layout.ResolvePlaces("all")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(all, got); d != "" {
		t.Fatalf("MachinePlaces and ResolvePlaces(all) differ:\n%s", d)
	}
	want := []layout.Place{
		{Name: "pi", Format: layout.FormatJSONL, Root: filepath.Join("/tmp/pi-agent", "sessions")},
		{Name: "indusagi", Format: layout.FormatJSONL, Root: filepath.Join("/tmp/ind-agent", "sessions")},
		{Name: "agentuse", Format: layout.FormatAgentUse, Root: filepath.Join("/tmp/data", "agentuse", "project")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("MachinePlaces (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[:2], layout.Places(got, layout.FormatJSONL)); d != "" {
		t.Errorf("Places(JSONL) (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[2:], layout.Places(got, layout.FormatAgentUse)); d != "" {
		t.Errorf("Places(AgentUse) (-want +got):\n%s", d)
	}
}
