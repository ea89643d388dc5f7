package agentuse_test

import (
	"context"
	"fmt"
	"log"
	"os"
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
