package agentuse_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// record is the package documentation's example, which shows its code:
// TestDocExamples in package engine checks that the two stay the same.
func record(ctx context.Context, store *agentuse.Store, now time.Time) error {
	sess, err := store.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "reviewer", Name: "reviewer"}, Model: "anthropic:claude-sonnet-4-5"})
	if err != nil {
		return err
	}
	defer sess.Close()
	msg, err := sess.AddMessage(agentuse.MessageSpec{Task: "Review the change.", ModelID: "anthropic:claude-sonnet-4-5"})
	if err != nil {
		return err
	}
	if _, err := sess.AddPart(msg, agentuse.TextPart("Looks good.", now)); err != nil {
		return err
	}
	if err := sess.CompleteMessage(msg); err != nil {
		return err
	}
	return sess.SetStatus(agentuse.StatusCompleted)
}

func Example() {
	dir, err := os.MkdirTemp("", "agentuse-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	// The zero StoreOptions find the project's store the way AgentUse
	// does; Dir names a store directly.
	store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := record(ctx, store, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)); err != nil {
		log.Fatal(err)
	}
	for x, err := range store.Sessions(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		c, err := store.Read(ctx, x)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(x.AgentName, x.Status+":", len(c.Messages), "message,", len(c.Messages[0].Parts), "part")
	}
	// Output: reviewer completed: 1 message, 1 part
}

func ExampleStore_Create() {
	dir, err := os.MkdirTemp("", "agentuse-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// Create writes session.json and holds the session's writer lock
	// until Close.
	sess, err := store.Create(ctx, agentuse.SessionSpec{
		Agent:   agentuse.Agent{ID: "agents/reviewer", Name: "reviewer"},
		Model:   "anthropic:claude-sonnet-4-5",
		Project: agentuse.Project{Root: "/home/dev/app", Cwd: "/home/dev/app"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	// The session's directory is <id>-<sanitised agent id>.
	fmt.Println(strings.TrimPrefix(filepath.Base(sess.Dir()), sess.ID()+"-"))

	// One message per run; parts as the model streams: a text part grows
	// with UpdatePart and ends with FinishText, a tool call with
	// CompleteTool or FailTool.
	msg, err := sess.AddMessage(agentuse.MessageSpec{Task: "Review the change.", ModelID: "anthropic:claude-sonnet-4-5"})
	if err != nil {
		log.Fatal(err)
	}
	tool, err := sess.AddPart(msg, agentuse.ToolPart("call_1", "bash", map[string]any{"command": "git diff"}, sess.Now()))
	if err != nil {
		log.Fatal(err)
	}
	if err := sess.CompleteTool(msg, tool, "1 file changed", nil); err != nil {
		log.Fatal(err)
	}
	text, err := sess.AddPart(msg, agentuse.TextPart("Looks", sess.Now()))
	if err != nil {
		log.Fatal(err)
	}
	if err := sess.FinishText(msg, text, "Looks good.\n"); err != nil {
		log.Fatal(err)
	}
	if err := sess.CompleteMessage(msg); err != nil {
		log.Fatal(err)
	}
	if err := sess.SetStatus(agentuse.StatusCompleted); err != nil {
		log.Fatal(err)
	}

	x, err := store.Resolve(ctx, sess.ID())
	if err != nil {
		log.Fatal(err)
	}
	c, err := store.Read(ctx, x)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.Status)
	for _, p := range c.Messages[0].Parts {
		fmt.Println(p.Type, p.Status)
	}
	// Output:
	// agents-reviewer
	// completed
	// tool completed
	// text
}

func ExampleStore_Open() {
	dir, err := os.MkdirTemp("", "agentuse-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	first, err := store.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "coder", Name: "coder"}, Model: "p:m"})
	if err != nil {
		log.Fatal(err)
	}
	id := first.ID()

	// While the session is open, Open fails with ErrLocked, naming the
	// holder (StoreOptions.Wait waits instead).
	if _, err := store.Open(ctx, id); errors.Is(err, agentuse.ErrLocked) {
		fmt.Println("locked")
	}
	if err := first.Close(); err != nil {
		log.Fatal(err)
	}

	// Open takes the session's directory, its id or a unique prefix of
	// its id.
	sess, err := store.Open(ctx, id[:12])
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	fmt.Println(sess.ID() == id, sess.Dir() == first.Dir())
	if err := sess.SetError(agentuse.SessionError{Code: "TIMEOUT", Message: "run timed out"}); err != nil {
		log.Fatal(err)
	}
	x, err := store.Resolve(ctx, sess.Dir())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.Status, x.ErrorCode)
	// Output:
	// locked
	// true true
	// error TIMEOUT
}

func ExampleStore_List() {
	dir, err := os.MkdirTemp("", "agentuse-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir, Now: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	for _, name := range []string{"planner", "coder"} {
		sess, err := store.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: name, Name: name}, Model: "p:m"})
		if err != nil {
			log.Fatal(err)
		}
		if name == "coder" {
			sub, err := sess.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "tester", Name: "tester"}, Model: "p:m"})
			if err != nil {
				log.Fatal(err)
			}
			if err := sub.SetStatus(agentuse.StatusCompleted); err != nil {
				log.Fatal(err)
			}
			if err := sub.Close(); err != nil {
				log.Fatal(err)
			}
		}
		if err := sess.Close(); err != nil {
			log.Fatal(err)
		}
	}
	// List is AgentUse's order: newest first, top-level sessions only
	// unless Subagents is set.
	list, err := store.List(ctx, agentuse.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, x := range list {
		fmt.Println(x.AgentName, x.Status, len(x.Children), "subagent")
	}
	all, err := store.List(ctx, agentuse.ListOptions{Subagents: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, x := range all {
		fmt.Print(x.AgentName, " ")
	}
	fmt.Println()
	// Output:
	// coder running 1 subagent
	// planner running 0 subagent
	// tester coder planner
}
