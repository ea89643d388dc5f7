package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/sessctl/sessctl/engine"
)

// agent is the minimal agent of the package documentation, which shows
// its code: TestDocExamples checks that the two stay the same.
func agent(ctx context.Context, cwd string, opts engine.Options, reply json.RawMessage) error {
	s, err := engine.Create(ctx, cwd, opts) // engine.Options{}: pi's store, every append fsynced
	if err != nil {
		return err
	}
	defer s.Close()
	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendMessage(json.RawMessage(`{"role":"user","content":"hi","timestamp":1772355600000}`))
	if _, err := s.AppendMessage(reply); err != nil { // the file appears now (pi's rule)
		return err
	}
	next := s.Context() // what to send to the model next
	fmt.Println(len(next.Messages), "messages for", string(next.Model))
	return nil
}

func Example() {
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reply := json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Hello."}],` +
		`"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1772355601000}`)
	if err := agent(context.Background(), "/home/dev/project", engine.Options{Dir: dir}, reply); err != nil {
		log.Fatal(err)
	}
	// Output: 2 messages for {"provider":"anthropic","modelId":"claude-sonnet-4-5"}
}
