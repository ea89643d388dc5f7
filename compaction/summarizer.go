package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
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
// output, with trailing white space removed, is the summary; empty output,
// and output that is not text (a NUL byte, invalid UTF-8), are errors. A
// non-zero exit is an error carrying the end of its standard error.
// Cancelling ctx kills the program (on Unix its whole process group) and
// nothing is written, like an aborted compaction in pi. On Unix the
// program runs in its own process group, and when it exits whatever it
// left running there (a background child) is killed; the summary is what
// it printed before it exited, even if such a child held its output open.
//
// The program also finds the request's metadata in its environment:
// SESSCTL_SUMMARY_KIND (history, history-update, turn-prefix, branch),
// SESSCTL_MAX_TOKENS, SESSCTL_REASONING (the request's Reasoning: a
// thinking level such as "medium", or empty) and
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
	// Timeout bounds each run of the program; 0 means no bound beyond
	// the caller's context. A program still running then is killed (on
	// Unix its whole process group) and Summarize fails with an error
	// matching ErrCommandTimeout.
	Timeout time.Duration
	// MaxOutput bounds the standard output read from the program, in
	// bytes: 0 means DefaultMaxOutput, a negative value no bound. A
	// program that prints more is killed and Summarize fails with an
	// error matching ErrOutputTooLarge; no more than the bound is ever
	// held in memory.
	MaxOutput int64
}

// DefaultMaxOutput is the bound on a summary command's output when
// Command.MaxOutput is 0: far more than any summary, far less than a
// runaway program prints.
const DefaultMaxOutput = 4 << 20

// ErrCommandTimeout is matched by the error of a summary command that
// ran longer than its Timeout.
var ErrCommandTimeout = errors.New("summary command timed out")

// ErrOutputTooLarge is matched by the error of a summary command that
// printed more than its MaxOutput.
var ErrOutputTooLarge = errors.New("summary command output too large")

// maxStderr bounds how much of a failed command's standard error an error
// carries.
const maxStderr = 4 << 10

// outputGrace bounds how long a summary command's output may stay open
// once the command has exited and its process group was killed: only a
// process it started outside its group (setsid) can hold it longer.
const outputGrace = 5 * time.Second

// Summarize runs the command for req.
func (c *Command) Summarize(ctx context.Context, req Request) (string, error) {
	if c.Path == "" {
		return "", errors.New("summary command: no program given")
	}
	parent := ctx
	if c.Timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeoutCause(ctx, c.Timeout, ErrCommandTimeout)
		defer cancelT()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
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
	input := []byte(req.Prompt)
	if c.JSON {
		input = RequestJSON(req)
	}
	limit := c.MaxOutput
	if limit == 0 {
		limit = DefaultMaxOutput
	}
	var stderr bytes.Buffer
	stdout := &cappedBuffer{max: limit, over: func() { cancel(ErrOutputTooLarge) }}
	p, err := startPiped(cmd)
	if err != nil {
		return "", fmt.Errorf("summary command %s: %w", c.Path, err)
	}
	// The program's streams are pipes read and written here, not by exec:
	// exec's Wait would wait for them to close, which a child left running
	// in the background delays for as long as it runs.
	var wg sync.WaitGroup
	wg.Go(func() {
		p.in.Write(input) // a program may stop reading: that is its business
		p.in.Close()
	})
	wg.Go(func() { io.Copy(stdout, p.out) })
	wg.Go(func() { io.Copy(&limitedBuffer{buf: &stderr, max: maxStderr}, p.err) })
	err = cmd.Wait()
	// The program has exited or was killed. Whatever it left running in
	// its process group is killed too, and what it printed before is
	// read to the end.
	killGroup(cmd)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	held := false
	select {
	case <-done:
	case <-time.After(outputGrace):
		held = true
		p.close()
		<-done
	}
	p.close()

	if parent.Err() != nil {
		return "", fmt.Errorf("summary command %s: %w; it was killed with the processes it started", c.Path, context.Cause(parent))
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrCommandTimeout):
		return "", fmt.Errorf("summary command %s: %w after %v; it was killed", c.Path, ErrCommandTimeout, c.Timeout)
	case errors.Is(cause, ErrOutputTooLarge) || stdout.overflow:
		return "", fmt.Errorf("summary command %s: %w: it printed more than %d bytes and was killed", c.Path, ErrOutputTooLarge, limit)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("summary command %s: %w: %s", c.Path, err, msg)
		}
		return "", fmt.Errorf("summary command %s: %w", c.Path, err)
	}
	if held {
		return "", fmt.Errorf("summary command %s exited, but a process it started outside its process group still held its output %v later; that process was not killed", c.Path, outputGrace)
	}
	out := strings.TrimRight(stdout.String(), " \t\r\n")
	if out == "" {
		return "", fmt.Errorf("summary command %s printed no summary", c.Path)
	}
	if why := notText(out); why != "" {
		return "", fmt.Errorf("summary command %s: its output is not text: %s", c.Path, why)
	}
	return out, nil
}

// notText says why s cannot be a summary ("a NUL byte at byte 9",
// "invalid UTF-8 at byte 3"), or returns "".
func notText(s string) string {
	for i, r := range s {
		switch {
		case r == 0:
			return fmt.Sprintf("a NUL byte at byte %d", i)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("invalid UTF-8 at byte %d", i)
		}
	}
	return ""
}

// piped is a started command's ends of its three pipes.
type piped struct {
	in, out, err *os.File
	once         sync.Once
}

// startPiped starts cmd with a new pipe for each standard stream,
// returning this process's ends; the command's ends are closed here once
// it has them, so that the output ends see EOF when the last process
// holding them is gone. cmd runs in its own process group (Unix).
func startPiped(cmd *exec.Cmd) (*piped, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	setProcessGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	p := &piped{in: inW, out: outR, err: errR}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// close closes this process's ends, which ends a blocked read or write.
func (p *piped) close() {
	p.once.Do(func() {
		p.in.Close()
		p.out.Close()
		p.err.Close()
	})
}

// cappedBuffer keeps what is written to it up to max bytes (max < 0: no
// bound). The first write past the bound calls over once and fails, so
// the copy from the program stops and nothing more is held.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int64
	over     func()
	overflow bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.overflow {
		return 0, ErrOutputTooLarge
	}
	if c.max >= 0 && int64(c.buf.Len())+int64(len(p)) > c.max {
		c.overflow = true
		c.over()
		return 0, ErrOutputTooLarge
	}
	return c.buf.Write(p)
}

func (c *cappedBuffer) String() string { return c.buf.String() }

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
	b := jsonl.NewObject(len(req.Prompt)*2+len(req.SystemPrompt)+256).
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

func optString(b *jsonl.ObjectBuilder, k, v string) {
	if v == "" {
		b.Null(k)
		return
	}
	b.String(k, v)
}

// RequestsJSON returns the requests a compaction with these custom
// instructions sends (Requests), as the JSON array 'sessctl compact
// --dry-run --json' shows: per request its kind, systemPrompt, prompt,
// maxTokens, reasoning ("" when unset) and conversationText.
func (p *Preparation) RequestsJSON(customInstructions string) []byte {
	h, t := p.Requests(customInstructions)
	out := []byte{'['}
	for _, r := range []*Request{h, t} {
		if r == nil {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		b := jsonl.NewObject(len(r.Prompt)+256).String("kind", string(r.Kind)).
			String("systemPrompt", r.SystemPrompt).String("prompt", r.Prompt).
			Number("maxTokens", float64(r.MaxTokens)).String("reasoning", r.Reasoning).
			String("conversationText", r.ConversationText)
		out = append(out, b.Bytes()...)
	}
	return append(out, ']')
}

// SummaryText returns a summary a caller wrote (a file, standard input)
// as the text to store: data without its trailing white space. It fails,
// naming the byte, where data is not text: a NUL byte, invalid UTF-8.
func SummaryText(data []byte) (string, error) {
	text := strings.TrimRight(string(data), " \t\r\n")
	for i, r := range text {
		switch {
		case r == 0:
			return "", fmt.Errorf("not text: a NUL byte at byte %d", i)
		case r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD"):
			return "", fmt.Errorf("not text: invalid UTF-8 at byte %d", i)
		}
	}
	return text, nil
}
