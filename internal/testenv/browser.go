package testenv

// A real browser for the web viewer's tests: headless Chromium driven over
// the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
// separated by NUL bytes on descriptors 3 and 4), so that no port is
// opened and no WebSocket library is needed.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chromium returns the browser the browser tests drive: $SESSCTL_CHROMIUM,
// else chromium, chromium-browser, google-chrome-stable or google-chrome
// on PATH (scripts/chromium.sh installs Debian's chromium). Without one
// the test is skipped with a message saying how to install it, or fails
// when SESSCTL_REQUIRE_BROWSER=1 (CI sets it).
func Chromium(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("SESSCTL_CHROMIUM"); b != "" {
		if _, err := os.Stat(b); err == nil {
			return b
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const missing = "no Chromium found (run scripts/chromium.sh, or set SESSCTL_CHROMIUM)"
	if os.Getenv("SESSCTL_REQUIRE_BROWSER") == "1" {
		t.Fatalf("SESSCTL_REQUIRE_BROWSER=1 but %s", missing)
	}
	t.Skipf("skipping: %s", missing)
	return ""
}

// Browser is a headless Chromium with one page.
type Browser struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      *os.File // the browser reads commands here
	stderr  *bytes.Buffer
	session string // the page's DevTools session

	mu      sync.Mutex
	next    int
	waiting map[int]chan reply
	logs    []string // console messages, exceptions and log entries of the page
	dead    error
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// NewBrowser starts Chromium (see Chromium) with a fresh profile and a
// page of width x height, and stops it when the test ends.
func NewBrowser(t testing.TB, width, height int) *Browser {
	t.Helper()
	bin := Chromium(t)
	cmdIn, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, in: in, stderr: &bytes.Buffer{}, waiting: map[int]chan reply{}}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	b.cmd.Stderr = &lockedWriter{w: b.stderr, mu: &b.mu}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	cmdIn.Close()
	cmdOut.Close()
	go b.read(out)
	t.Cleanup(b.close)
	targets, err := b.call("", "Target.getTargets", nil)
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, b.stderrText())
	}
	var tl struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	_ = json.Unmarshal(targets, &tl)
	target := ""
	for _, ti := range tl.TargetInfos {
		if ti.Type == "page" {
			target = ti.TargetID
			break
		}
	}
	if target == "" {
		res, err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
		if err != nil {
			t.Fatal(err)
		}
		var ct struct {
			TargetID string `json:"targetId"`
		}
		_ = json.Unmarshal(res, &ct)
		target = ct.TargetID
	}
	res, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &at)
	b.session = at.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if _, err := b.call(b.session, m, nil); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	if _, err := b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		t.Fatal(err)
	}
	return b
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() < 1<<20 {
		l.w.Write(p)
	}
	return len(p), nil
}

func (b *Browser) stderrText() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stderr.String()
}

// read dispatches the browser's messages: replies to their callers,
// console output and errors of the page to the log.
func (b *Browser) read(out *os.File) {
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.dead = fmt.Errorf("the browser closed its pipe: %w", err)
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			out.Close()
			return
		}
		msg = msg[:len(msg)-1]
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			reply
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		b.mu.Lock()
		switch {
		case m.ID != 0:
			if ch, ok := b.waiting[m.ID]; ok {
				ch <- m.reply
				delete(b.waiting, m.ID)
			}
		case m.Method == "Runtime.consoleAPICalled", m.Method == "Runtime.exceptionThrown", m.Method == "Log.entryAdded":
			b.logs = append(b.logs, m.Method+" "+string(m.Params))
		}
		b.mu.Unlock()
	}
}

// call sends a command and waits for its reply, up to 60 seconds.
func (b *Browser) call(session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	if b.dead != nil {
		b.mu.Unlock()
		return nil, b.dead
	}
	b.next++
	id := b.next
	ch := make(chan reply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	if session != "" {
		m["sessionId"] = session
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: %w", method, b.dead)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("%s: no reply in 60 s", method)
	}
}

// Navigate opens url in the page and waits until it has loaded.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	res, err := b.call(b.session, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		b.t.Fatal(err)
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	_ = json.Unmarshal(res, &nav)
	if nav.ErrorText != "" {
		b.t.Fatalf("navigate to %s: %s", url, nav.ErrorText)
	}
	b.WaitFor(`document.readyState === "complete" && location.href !== "about:blank"`, 30*time.Second)
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value into v (when not nil).
func (b *Browser) Eval(expr string, v any) error {
	res, err := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if v != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, v)
	}
	return nil
}

// MustEval is Eval that fails the test on an error.
func (b *Browser) MustEval(expr string, v any) {
	b.t.Helper()
	if err := b.Eval(expr, v); err != nil {
		b.t.Fatal(err)
	}
}

// WaitFor waits until the expression is true in the page (errors while a
// new page loads are retried), failing the test after timeout.
func (b *Browser) WaitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		var ok bool
		if err := b.Eval("!!("+expr+")", &ok); err == nil && ok {
			return
		} else if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			var href, text string
			_ = b.Eval("location.href", &href)
			_ = b.Eval("document.body ? document.body.innerText.slice(0, 2000) : ''", &text)
			b.t.Fatalf("waited %v for %s (last error %v) on %s:\n%s\nconsole: %s", timeout, expr, last, href, text, strings.Join(b.Logs(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot returns a PNG of the page as it is shown.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	res, err := b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		b.t.Fatal(err)
	}
	var r struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		b.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

// Logs returns the console messages, uncaught exceptions and log entries
// (a Content-Security-Policy violation, a failed load) of the page so far.
func (b *Browser) Logs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logs...)
}

func (b *Browser) close() {
	_, _ = b.call("", "Browser.close", nil)
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
	b.in.Close()
	if b.t.Failed() {
		b.t.Logf("chromium's stderr:\n%s", b.stderrText())
	}
}
