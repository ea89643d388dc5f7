package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout"
)

// A Summarizer turns one summary request into summary text: the part of
// compaction and branch summarisation that needs a model. Summarize must
// honour ctx; an error means nothing is written.
type Summarizer interface {
	Summarize(ctx context.Context, req Request) (string, error)
}

// Func adapts a function to a Summarizer.
type Func func(ctx context.Context, req Request) (string, error)

// Summarize calls f.
func (f Func) Summarize(ctx context.Context, req Request) (string, error) { return f(ctx, req) }

// Fixed is a Summarizer that answers every request with the same text,
// for tests and for callers that already have a summary.
type Fixed string

// Summarize returns the fixed text.
func (f Fixed) Summarize(ctx context.Context, _ Request) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return string(f), nil
}

// Command is a Summarizer that runs an external program once per request,
// so any local model CLI can write the summaries. The program gets the
// request on standard input: the Prompt text (pi's user message), or with
// JSON the whole request as one JSON object (see RequestJSON). Its standard
// output, with trailing white space removed, is the summary; empty output
// is an error. A non-zero exit is an error carrying the end of its standard
// error. Cancelling ctx kills the program (on Unix its whole process group)
// and nothing is written, like an aborted compaction in pi.
//
// The program also finds the request's metadata in its environment:
// SESSCTL_SUMMARY_KIND (history, history-update, turn-prefix, branch),
// SESSCTL_MAX_TOKENS, SESSCTL_REASONING ("high" or empty) and
// SESSCTL_SYSTEM_PROMPT, added to the environment it inherits.
type Command struct {
	// Path is the program; Args are its arguments (Args[0] is not the
	// program name). The CLI runs "sh -c CMD".
	Path string
	Args []string
	// Dir is the working directory; "" is the current one.
	Dir string
	// Env are extra NAME=value pairs for the program.
	Env []string
	// JSON sends RequestJSON(req) on standard input instead of the prompt.
	JSON bool
}

// maxStderr bounds how much of a failed command's standard error an error
// carries.
const maxStderr = 4 << 10

// Summarize runs the command for req.
func (c *Command) Summarize(ctx context.Context, req Request) (string, error) {
	if c.Path == "" {
		return "", errors.New("summary command: no program given")
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	env := cmd.Environ()
	env = append(env, c.Env...)
	env = append(env,
		"SESSCTL_SUMMARY_KIND="+string(req.Kind),
		"SESSCTL_MAX_TOKENS="+strconv.Itoa(req.MaxTokens),
		"SESSCTL_REASONING="+req.Reasoning,
		"SESSCTL_SYSTEM_PROMPT="+req.SystemPrompt,
	)
	cmd.Env = env
	if c.JSON {
		cmd.Stdin = bytes.NewReader(RequestJSON(req))
	} else {
		cmd.Stdin = strings.NewReader(req.Prompt)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: maxStderr}
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", fmt.Errorf("summary command %s: %w", c.Path, ctxErr)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("summary command %s: %w: %s", c.Path, err, msg)
		}
		return "", fmt.Errorf("summary command %s: %w", c.Path, err)
	}
	out := strings.TrimRight(stdout.String(), " \t\r\n")
	if out == "" {
		return "", fmt.Errorf("summary command %s printed no summary", c.Path)
	}
	return out, nil
}

// limitedBuffer keeps the last max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	l.buf.Write(p)
	if over := l.buf.Len() - l.max; over > 0 {
		rest := append([]byte(nil), l.buf.Bytes()[over:]...)
		l.buf.Reset()
		l.buf.Write(rest)
	}
	return n, nil
}

// RequestJSON encodes a request as one JSON object: kind, systemPrompt,
// prompt, maxTokens, reasoning (null when unset), conversationText,
// previousSummary (null when none), customInstructions (null when none),
// replaceInstructions, and messages (the messages to summarise as stored,
// before ConvertToLLM).
func RequestJSON(req Request) []byte {
	b := layout.NewObject(len(req.Prompt)*2+len(req.SystemPrompt)+256).
		String("kind", string(req.Kind)).
		String("systemPrompt", req.SystemPrompt).
		String("prompt", req.Prompt).
		Number("maxTokens", float64(req.MaxTokens))
	optString(b, "reasoning", req.Reasoning)
	b.String("conversationText", req.ConversationText)
	optString(b, "previousSummary", req.PreviousSummary)
	optString(b, "customInstructions", req.CustomInstructions)
	b.Bool("replaceInstructions", req.ReplaceInstructions)
	msgs := []byte{'['}
	for i, m := range req.Messages {
		if i > 0 {
			msgs = append(msgs, ',')
		}
		msgs = append(msgs, m.Raw...)
	}
	msgs = append(msgs, ']')
	b.Raw("messages", msgs)
	return b.Bytes()
}

func optString(b *layout.ObjectBuilder, k, v string) {
	if v == "" {
		b.Null(k)
		return
	}
	b.String(k, v)
}
