// Command agent is an ADK-Go agent whose sessions sessctl keeps: an
// llmagent with a weather tool, run by ADK's runner on the adk adapter's
// session.Service. Its model is a small one of its own that answers
// without a network (it calls the tool, then reports what the tool said),
// so the example runs anywhere; swap in gemini.NewModel for a real one.
//
//	go run ./examples/agent [DIR]
//
// It runs two turns in one session under DIR (default: a new temporary
// directory), prints the events, and the session file pi and sessctl open:
//
//	sessctl show <file>
//	pi --session <file>
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/adk"
	"github.com/sessctl/sessctl/engine"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"
)

func main() {
	dir := ""
	if len(os.Args) > 1 {
		dir = os.Args[1]
	} else {
		d, err := os.MkdirTemp("", "adk-agent-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		dir = d
	}
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	// The switch from ADK's in-memory or database service: one call.
	sessions, err := adk.New(ctx, adk.Options{
		Store:    engine.StoreOptions{Dir: filepath.Join(dir, "sessions")},
		StateDir: filepath.Join(dir, "state"),
	})
	if err != nil {
		return err
	}
	defer sessions.Close()

	type weatherArgs struct {
		City string `json:"city"`
	}
	type weatherResult struct {
		Forecast string `json:"forecast"`
	}
	weather, err := functiontool.New(functiontool.Config{Name: "weather", Description: "Today's weather in a city."},
		func(ctx agent.Context, a weatherArgs) (weatherResult, error) {
			return weatherResult{Forecast: "sunny and 21°C in " + a.City}, nil
		})
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{
		Name:        "weather_agent",
		Model:       offlineModel{},
		Instruction: "Answer questions about the weather with the weather tool.",
		Tools:       []tool.Tool{weather},
	})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "weather", Agent: a, SessionService: sessions})
	if err != nil {
		return err
	}
	created, err := sessions.Create(ctx, &session.CreateRequest{AppName: "weather", UserID: "ann"})
	if err != nil {
		return err
	}
	id := created.Session.ID()
	for _, prompt := range []string{"What is the weather in Paris?", "And in Lyon?"} {
		fmt.Fprintf(out, "user: %s\n", prompt)
		for ev, err := range r.Run(ctx, "ann", id, genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s: %s\n", ev.Author, describe(ev.Content))
		}
	}
	got, err := sessions.Get(ctx, &session.GetRequest{AppName: "weather", UserID: "ann", SessionID: id})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "session %s: %d events\n", id, got.Session.Events().Len())
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "weather", "ann", "*_"+id+".jsonl"))
	for _, f := range files {
		fmt.Fprintf(out, "file: %s\n", f)
	}
	return nil
}

// describe returns a line for an event's content.
func describe(c *genai.Content) string {
	if c == nil {
		return "(no content)"
	}
	var parts []string
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			parts = append(parts, fmt.Sprintf("call %s(%v)", p.FunctionCall.Name, p.FunctionCall.Args))
		case p.FunctionResponse != nil:
			parts = append(parts, fmt.Sprintf("%s returned %v", p.FunctionResponse.Name, p.FunctionResponse.Response))
		default:
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, " ")
}

// offlineModel is a model.LLM that needs no network: asked about a city,
// it calls the weather tool; given the tool's answer, it reports it.
type offlineModel struct{}

func (offlineModel) Name() string { return "offline-weather" }

func (offlineModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		last := req.Contents[len(req.Contents)-1]
		var resp *genai.Content
		for _, p := range last.Parts {
			if fr := p.FunctionResponse; fr != nil {
				resp = genai.NewContentFromText(fmt.Sprintf("The forecast: %v.", fr.Response["forecast"]), genai.RoleModel)
			}
		}
		if resp == nil {
			city := "Paris"
			for _, p := range last.Parts {
				if i := strings.LastIndex(p.Text, " in "); i >= 0 {
					city = strings.TrimRight(p.Text[i+4:], "?. ")
				}
			}
			resp = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "Let me check."},
				{FunctionCall: &genai.FunctionCall{ID: "call-" + strings.ToLower(city), Name: "weather", Args: map[string]any{"city": city}}},
			}}
		}
		yield(&model.LLMResponse{
			Content:       resp,
			ModelVersion:  "offline-weather",
			TurnComplete:  true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(len(req.Contents)) * 10, CandidatesTokenCount: 8, TotalTokenCount: int32(len(req.Contents))*10 + 8},
		}, nil)
	}
}
