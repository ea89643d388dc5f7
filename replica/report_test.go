package replica_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/age"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/replica"
)

// TestReportTallyAndJSON checks the counts by state, in States order,
// and the JSON shape: errors as strings, lists never null.
func TestReportTallyAndJSON(t *testing.T) {
	r := &replica.Report{Sessions: []replica.SessionReport{
		{Kind: "pi", Name: "a", State: "pushed", Pushed: 2},
		{Kind: "pi", Name: "b", State: "in sync"},
		{Kind: "pi", Name: "c", State: "failed", Err: errors.New("boom")},
		{Kind: "pi", Name: "d", State: "pushed", Conflicts: []replica.Conflict{{ID: "x", Copies: []string{"y"}}}},
	}, Warnings: []replica.Warning{}}
	got := r.Tally()
	want := []replica.StateCount{{"in sync", 1}, {"pushed", 2}, {"failed", 1}}
	if len(got) != len(want) {
		t.Fatalf("Tally = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Tally = %v, want %v", got, want)
		}
	}
	j := r.JSON()
	if j.Warnings == nil || j.Sessions[0].Conflicts == nil || j.Sessions[0].Error != nil || *j.Sessions[2].Error != "boom" || j.Sessions[3].Conflicts[0].Copies[0] != "y" {
		t.Errorf("JSON = %+v", j)
	}
}

// TestOptionsStoreAndIdentity checks that SetPlaces replaces the agent
// directories with the places, and that an identity file gives both the
// identity and its recipient.
func TestOptionsStoreAndIdentity(t *testing.T) {
	o := replica.Options{AgentDir: "/some/agent", AgentUseDir: "/some/data"}
	ps := []layout.Place{{Name: "/d", Format: layout.FormatJSONL, Root: "/d"}, {Name: "/d", Format: layout.FormatAgentUse, Root: "/d"}}
	o.SetPlaces(ps)
	if o.AgentDir != "" || o.AgentUseDir != "" || len(o.Places) != 2 || o.Places[0] != ps[0] || o.Places[1] != ps[1] {
		t.Errorf("SetPlaces: %+v", o)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(path, []byte("# key\n"+id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := o.LoadIdentity(path); err != nil {
		t.Fatal(err)
	}
	if len(o.Identities) != 1 || len(o.Recipients) != 1 || o.Recipients[0].(*age.X25519Recipient).String() != id.Recipient().String() {
		t.Errorf("LoadIdentity gave %d identities, recipients %v", len(o.Identities), o.Recipients)
	}
	if err := o.LoadIdentity(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing identity file: %v", err)
	}
}
