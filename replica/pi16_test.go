package replica_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// A session with pi 1.x's entries (a system message, usage entries,
// context edits that omit and replace) is pulled on a fresh machine byte
// for byte; a context edit appended there merges back, and pi loads the
// first machine's file with every edit applied, the context sessctl
// gives. The remote listing counts the messages as pi's listing does
// (usage and context_edit entries are not messages).
func TestPi16EntriesSync(t *testing.T) { eachBackend(t, testPi16EntriesSync) }

func testPi16EntriesSync(t *testing.T, be *backend) {
	node, modules := testenv.Pi(t)
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	at := time.UnixMilli(1772355600000)
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Total: 0.25})
	must := func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	s, err := openStore(t, engine.StoreOptions{AgentDir: a.agentDir, Sync: engine.SyncNone}).Create(context.Background(), "/home/dev/proj", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asst := func(text string) message.Message {
		return message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText(text)}, usage, message.StopStop, at)
	}
	must(s.AppendMessage(message.NewSystem("answer tersely", at)))
	u1 := must(s.AppendMessage(message.NewUserBlocks(at, message.NewText("run the build"), message.NewText("and paste the log"))))
	a1 := must(s.AppendMessage(asst("HUGE LOG")))
	must(s.AppendUsage("title", "anthropic", "claude-haiku", usage, "a title"))
	must(s.AppendContextEdit(a1, "[log removed]"))
	must(s.AppendContextEdit(u1, nil))
	must(s.AppendMessage(message.NewUser("now the tests", at)))
	a2 := must(s.AppendMessage(asst("ANOTHER HUGE LOG")))
	pa := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	a.run(t, "push")
	b.run(t, "pull")
	pb := sessionFiles(t, b.agentDir)[filepath.Base(pa)]
	da, _ := os.ReadFile(pa)
	db, _ := os.ReadFile(pb)
	if pb == "" || !bytes.Equal(da, db) {
		t.Fatalf("pulled %q, bytes differ (-a +b):\n%s", pb, cmp.Diff(string(da), string(db)))
	}

	// b edits a's message out of the context and records a usage; a
	// pulls it.
	sb, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), pb, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(sb.AppendUsage("compaction", "anthropic", "claude-haiku", usage, ""))
	editB := must(sb.AppendContextEdit(a2, "[second log removed on b]"))
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	b.run(t, "sync")
	a.run(t, "sync")
	da, _ = os.ReadFile(pa)
	db, _ = os.ReadFile(pb)
	if !bytes.Equal(da, db) {
		t.Fatalf("after the merge the files differ (-a +b):\n%s", cmp.Diff(string(da), string(db)))
	}

	// pi 1.6.0 opens a's file: b's edit is the leaf, and the context has
	// every edit applied.
	req, _ := json.Marshal(map[string]any{"states": []string{pa}, "lists": [][]string{{"/home/dev/proj", filepath.Dir(pa)}}})
	cmd := exec.Command(node, filepath.Join(testenv.RepoRoot(t), "scripts", "pi-reference.mjs"), modules)
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi-reference.mjs: %v", err)
	}
	var pi struct {
		States map[string]struct {
			LeafID  string `json:"leafId"`
			Context struct{ Messages []json.RawMessage }
		}
		Lists [][]struct {
			Path         string
			MessageCount int
			FirstMessage string
		}
	}
	if err := json.Unmarshal(out, &pi); err != nil {
		t.Fatal(err)
	}
	st := pi.States[pa]
	if st.LeafID != editB {
		t.Errorf("pi's leaf is %s, want b's edit %s", st.LeafID, editB)
	}
	var roles []string
	var ctxText strings.Builder
	for _, m := range st.Context.Messages {
		ctxText.Write(m)
		var v struct{ Role string }
		_ = json.Unmarshal(m, &v)
		roles = append(roles, v.Role)
	}
	if want := []string{"system", "assistant", "user", "assistant"}; !cmp.Equal(roles, want) {
		t.Errorf("pi's context roles %v, want %v", roles, want)
	}
	for _, want := range []string{"[log removed]", "[second log removed on b]", "now the tests"} {
		if !strings.Contains(ctxText.String(), want) {
			t.Errorf("pi's context lacks %q:\n%s", want, ctxText.String())
		}
	}
	for _, gone := range []string{"HUGE LOG", "run the build"} {
		if strings.Contains(ctxText.String(), gone) {
			t.Errorf("pi's context still has %q:\n%s", gone, ctxText.String())
		}
	}
	fc, err := engine.ReadContext(context.Background(), pa, "", engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	if err := render.Context(&ours, fc.Context); err != nil {
		t.Fatal(err)
	}
	var oc struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(ours.Bytes(), &oc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(generic(t, st.Context.Messages), generic(t, oc.Messages)); diff != "" {
		t.Errorf("context (-pi +sessctl):\n%s", diff)
	}

	// The remote listing's summary counts messages as pi's listing.
	if len(pi.Lists) != 1 || len(pi.Lists[0]) != 1 {
		t.Fatalf("pi lists %+v, want one session", pi.Lists)
	}
	rs, err := a.remote(t).Sessions(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("remote sessions %+v, %v", rs, err)
	}
	sum, want := rs[0].Summary, pi.Lists[0][0]
	if sum.Messages != want.MessageCount || sum.FirstMessage != want.FirstMessage {
		t.Errorf("remote summary: %d messages, first %q; pi lists %d, %q", sum.Messages, sum.FirstMessage, want.MessageCount, want.FirstMessage)
	}
}

// generic decodes JSON values for a comparison that ignores key order.
func generic(t *testing.T, raws []json.RawMessage) []any {
	t.Helper()
	out := make([]any, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
