package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
)

// agent is the minimal agent of the package documentation, which shows
// its code: TestDocExamples checks that the two stay the same.
func agent(ctx context.Context, cwd string, opts engine.Options, reply *message.Assistant) error {
	s, err := engine.Create(ctx, cwd, opts) // engine.Options{}: pi's store, every append fsynced
	if err != nil {
		return err
	}
	defer s.Close()
	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendMessage(message.NewUser("hi", time.Now()))
	if _, err := s.AppendMessage(reply); err != nil { // the file appears now (pi's rule)
		return err
	}
	next := s.Context() // what to send to the model next
	model, _ := next.CurrentModel()
	fmt.Println(len(next.Messages), "messages for", model.Provider, model.ModelID)
	return nil
}

func Example() {
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reply := message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText("Hello.")}, message.Usage{}, message.StopStop, time.Now())
	if err := agent(context.Background(), "/home/dev/project", engine.Options{Dir: dir}, reply); err != nil {
		log.Fatal(err)
	}
	// Output: 2 messages for anthropic claude-sonnet-4-5
}
