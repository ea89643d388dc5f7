package web

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// toolCallSession writes a session whose assistant calls pi's tools,
// with markup in every argument a page shows, and returns its file.
func toolCallSession(t *testing.T, dir string) string {
	t.Helper()
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/home/dev/app", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(message.NewUser("Fix the build.", t0)); err != nil {
		t.Fatal(err)
	}
	call := func(id, name, args string) message.Block {
		return message.NewToolCall(id, name, json.RawMessage(args))
	}
	calls := []message.Block{
		call("c1", "bash", `{"command":"grep -n '<script>' web/*.go && echo \"a&b\"","timeout":30}`),
		call("c2", "read", `{"path":"src/<b>main</b>.go","offset":10,"limit":50}`),
		call("c3", "read", `{"path":"README.md"}`),
		call("c4", "read", `{"path":"go.mod","offset":"7"}`),
		call("c5", "edit", `{"path":"src/<i>codec</i>.go","edits":[{"oldText":"import (\n\t\"fmt\"\n)\n","newText":"import (\n\t\"fmt\"\n\t\"unicode/utf16\"\n)\n"},{"oldText":"x := <old>","newText":"x := <new>"}]}`),
		call("c6", "edit", `{"file_path":"legacy.go","oldText":"a\nb\nc","newText":"a\nB\nc"}`),
		call("c7", "write", `{"path":"notes/<u>todo</u>.md","content":"line one <img src=x onerror=alert(1)>\nline two\n"}`),
		call("c8", "grep", `{"pattern":"utf16","path":"src"}`),
		call("c9", "bash", `{"command":["not","a","string"]}`),
		call("c10", "edit", `{"path":"x.go","edits":"[{\"oldText\":\"v1\",\"newText\":\"v2\"}]"}`),
	}
	if _, err := s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", calls,
		message.Usage{}, message.StopToolUse, t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	return s.SessionFile()
}

// TestToolCallsShownByTheirArguments: a bash call shows its command, a
// read its path and range, an edit a diff of its replacements, a write
// its path with the content folded; other tools and calls whose
// arguments the tool does not take keep their JSON. Everything escaped.
func TestToolCallsShownByTheirArguments(t *testing.T) {
	s := newServer(t, Options{})
	file := toolCallSession(t, s.root)
	body := s.mustGet(s.page(file))
	for _, want := range []string{
		// bash: the command, monospace, and its timeout.
		`<div class="call cmd"><span class="tool">→ bash</span> <span class="meta">timeout 30 s</span><pre class="cmd"><code>grep -n &#39;&lt;script&gt;&#39; web/*.go &amp;&amp; echo &#34;a&amp;b&#34;</code></pre>`,
		// read: the path and the lines, as pi's formatReadLineRange.
		`<p class="call read"><span class="tool">→ read</span> <code class="path">src/&lt;b&gt;main&lt;/b&gt;.go</code> <span class="range">lines 10–59</span></p>`,
		`<p class="call read"><span class="tool">→ read</span> <code class="path">README.md</code></p>`,
		`<code class="path">go.mod</code> <span class="range">from line 7</span>`,
		// edit: a diff, each replacement with its head.
		`<summary>→ edit src/&lt;i&gt;codec&lt;/i&gt;.go (&#43;2 −1)</summary>`,
		`<span class="hunk">@@ replacement 1 of 2 @@` + "\n" + `</span><span class="ctx"> import (` + "\n" + `</span><span class="ctx"> ` + "\t" + `&#34;fmt&#34;` + "\n" + `</span><span class="add">&#43;` + "\t" + `&#34;unicode/utf16&#34;` + "\n" + `</span><span class="ctx"> )` + "\n" + `</span>`,
		`<span class="hunk">@@ replacement 2 of 2 @@` + "\n" + `</span><span class="del">-x := &lt;old&gt;` + "\n" + `</span><span class="add">&#43;x := &lt;new&gt;` + "\n" + `</span>`,
		// the legacy form (file_path, top-level oldText/newText).
		`<summary>→ edit legacy.go (&#43;1 −1)</summary><pre class="diff"><span class="ctx"> a` + "\n" + `</span><span class="del">-b` + "\n" + `</span><span class="add">&#43;B` + "\n" + `</span><span class="ctx"> c` + "\n" + `</span></pre>`,
		// edits sent as a JSON string, as pi's prepareArguments takes it.
		`<summary>→ edit x.go (&#43;1 −1)</summary><pre class="diff"><span class="del">-v1` + "\n" + `</span><span class="add">&#43;v2` + "\n" + `</span></pre>`,
		// write: the path, the content folded.
		`<details class="fold call"><summary>→ write notes/&lt;u&gt;todo&lt;/u&gt;.md (2 lines, 47 B)</summary><pre>line one &lt;img src=x onerror=alert(1)&gt;` + "\n" + `line two` + "\n" + `</pre></details>`,
		// other tools: the JSON, folded.
		`<details class="fold call"><summary>→ grep {&#34;pattern&#34;:&#34;utf16&#34;,&#34;path&#34;:&#34;src&#34;}</summary>`,
		`<details class="fold call"><summary>→ bash {&#34;command&#34;:[&#34;not&#34;,&#34;a&#34;,&#34;string&#34;]}</summary>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the transcript lacks\n%s", want)
		}
	}
	// A diff is open, a write's content folded.
	if !regexp.MustCompile(`<details class="fold call diff" open><summary>→ edit legacy.go`).MatchString(body) {
		t.Error("the edit's diff is not open")
	}
	for _, bad := range []string{"<script>", "<b>main", "<i>codec", "<u>todo", "<img src=x", "<old>", "<new>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	// The bash call's JSON is not what the page shows of it.
	if strings.Contains(body, `&#34;command&#34;:&#34;grep`) {
		t.Error("the bash call is still shown as JSON")
	}
}

// TestLongEditDiffFolded: an edit of many lines shows its diff folded,
// and the whole-entry page shows it open.
func TestLongEditDiffFolded(t *testing.T) {
	b := diffBlock("edit", "big.go", []edit{{old: strings.Repeat("old line\n", 30), new: strings.Repeat("new line\n", 30)}})
	if b.Open || len(b.Lines) != 60 || b.Summary != "→ edit big.go (+30 −30)" {
		t.Errorf("open %v, %d lines, %q", b.Open, len(b.Lines), b.Summary)
	}
	if b.Lines[0] != (diffLine{"del", "-old line\n"}) || b.Lines[59] != (diffLine{"add", "+new line\n"}) {
		t.Errorf("lines %v … %v", b.Lines[0], b.Lines[59])
	}
	// A page holds at most maxBlock of a diff and says how much is left.
	huge := diffBlock("edit", "huge.go", []edit{{old: "", new: strings.Repeat("123456789\n", 10000)}})
	size := 0
	for _, l := range huge.Lines {
		size += len(l.Text)
	}
	if size > maxBlock || size < maxBlock-11 || huge.Cut != fmt.Sprint(10000-len(huge.Lines))+" more lines of the diff" || huge.Summary != "→ edit huge.go (+10000 −0)" {
		t.Errorf("%d bytes of diff shown, cut %q, %q", size, huge.Cut, huge.Summary)
	}
}

// TestDiffLines: the diff keeps the lines both texts hold as context and
// marks the others, in order.
func TestDiffLines(t *testing.T) {
	for _, c := range []struct {
		old, new string
		want     string
	}{
		{"a\nb\nc\n", "a\nc\n", " a|-b| c|"},
		{"a\nc", "a\nb\nc", " a|+b| c|"},
		{"", "x\n", "+x|"},
		{"x\n", "", "-x|"},
		{"1\n2\n3\n4\n", "1\nx\n3\ny\n", " 1|-2|+x| 3|-4|+y|"},
		{"same", "same", " same|"},
	} {
		var got strings.Builder
		for _, l := range diffLines(c.old, c.new) {
			got.WriteString(strings.TrimSuffix(l.Text, "\n") + "|")
		}
		if got.String() != c.want {
			t.Errorf("diff %q -> %q: %s, want %s", c.old, c.new, got.String(), c.want)
		}
	}
}

// TestForksAndChildrenNamed: a session's page names each fork or child
// by its session name, else its first user message, else its short id.
func TestForksAndChildrenNamed(t *testing.T) {
	s := newServer(t, Options{})
	ctx := t.Context()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: s.root, Sync: engine.SyncNone, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reply := func(text string) *message.Assistant {
		return message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
			[]message.Block{message.NewText(text)}, message.Usage{}, message.StopStop, t0.Add(time.Second))
	}
	p, err := st.Create(ctx, "/home/dev/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, m := range []message.Message{message.NewUser("  the pangolin question\nin two lines", t0), reply("an answer")} {
		if _, err := p.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	fork, err := st.Fork(ctx, p.SessionFile(), engine.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	silent, err := p.NewChild(ctx, engine.ChildOptions{}) // no user message
	if err != nil {
		t.Fatal(err)
	}
	if _, err := silent.AppendMessage(reply("started by the tool")); err != nil {
		t.Fatal(err)
	}
	silent.Close()
	named, err := p.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []message.Message{message.NewUser("review it", t0), reply("reviewing")} {
		if _, err := named.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := named.AppendSessionInfo("reviewer <b>"); err != nil {
		t.Fatal(err)
	}
	named.Close()
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)

	page := s.mustGet(s.page(p.SessionFile()))
	_, kids, ok := strings.Cut(page, "forks and children")
	if !ok {
		t.Fatal("no forks and children")
	}
	kids, _, _ = strings.Cut(kids, "</ul>")
	links := regexp.MustCompile(`<li><a href="[^"]*">([^<]*)</a></li>`).FindAllStringSubmatch(kids, -1)
	var texts []string
	for _, l := range links {
		texts = append(texts, l[1])
	}
	short := func(id string) string {
		t.Helper()
		for i := 8; i <= len(id); i++ {
			n := 0
			for _, x := range []string{p.SessionID(), fork.SessionID(), silent.SessionID(), named.SessionID()} {
				if strings.HasPrefix(x, id[:i]) {
					n++
				}
			}
			if n == 1 {
				return id[:i]
			}
		}
		return id
	}
	want := map[string]bool{
		"the pangolin question in two lines (" + short(fork.SessionID()) + ")": true,
		short(silent.SessionID()):                               true,
		"reviewer &lt;b&gt; (" + short(named.SessionID()) + ")": true,
	}
	if len(texts) != len(want) {
		t.Fatalf("forks and children %q, want %d", texts, len(want))
	}
	for _, x := range texts {
		if !want[x] {
			t.Errorf("forks and children show %q, not one of %v", x, want)
		}
	}
}
