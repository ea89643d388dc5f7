// Package adk is a session.Service of Google's Agent Development Kit for Go
// (google.golang.org/adk/v2) on sessctl's engine: every ADK session is an
// ordinary pi session file, which pi opens with the conversation as its
// model context and the sessctl CLI shows, forks and branches. It passes
// ADK's own test suite for session services (sessiontestsuite).
//
// An agent switches to it by handing ADK's runner the Service instead of
// session.InMemoryService() or the database service:
//
//	sessions, err := adk.New(ctx, adk.Options{
//		Store: engine.StoreOptions{Dir: "/var/lib/myagent/sessions"},
//	})
//	if err != nil {
//		return err
//	}
//	defer sessions.Close()
//	r, err := runner.New(runner.Config{AppName: "weather", Agent: a, SessionService: sessions})
//
// Events keep their content once, as pi messages (text, thinking, tool
// calls and results, images, usage), the rest of the event beside them as
// ADK's JSON; app: and user: state lives in a state directory of
// sessctl's (Options.StateDir), never in a session file. See Service for
// the writer lock a Service holds and README.md for the whole picture.
//
// The package is a module of its own, so that programs that use sessctl
// without ADK never download ADK's dependencies.
package adk
