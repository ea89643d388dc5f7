package adk_test

import (
	"context"

	"github.com/sessctl/sessctl/adk"
	"github.com/sessctl/sessctl/engine"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/runner"
)

// serve runs an ADK agent whose sessions sessctl keeps.
func serve(ctx context.Context, a agent.Agent) error {
	sessions, err := adk.New(ctx, adk.Options{
		Store: engine.StoreOptions{Dir: "/var/lib/myagent/sessions"},
	})
	if err != nil {
		return err
	}
	defer sessions.Close()
	r, err := runner.New(runner.Config{AppName: "weather", Agent: a, SessionService: sessions})
	if err != nil {
		return err
	}
	_ = r // r.Run(ctx, userID, sessionID, message, agent.RunConfig{}) as with any session service
	return nil
}

// The switch from ADK's in-memory or database service is the
// session.Service handed to the runner.
func Example() {
	_ = serve
}
