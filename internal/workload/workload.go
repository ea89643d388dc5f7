package workload

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Options shape a generated session.
type Options struct {
	// Seed makes the output reproducible.
	Seed uint64
	// Entries is the number of entries after the header.
	Entries int
	// Version is 3 (default) or 1 (no ids, firstKeptEntryIndex, no
	// version in the header).
	Version int
	// ToolResultMin and ToolResultMax bound tool result sizes in bytes
	// (default 1,000 and 20,000).
	ToolResultMin, ToolResultMax int
	// ImageEvery puts a 100 KB image into a user message every so many
	// entries (default 1000; negative: never).
	ImageEvery int
	// Start is the header time (default 2026-03-01T09:00:00Z).
	Start time.Time
	// Cwd is the header's cwd (default /home/dev/project).
	Cwd string
	// FS is the filesystem WriteFile writes to; nil means
	// vfs.OS().
	FS vfs.FS
}

func (o *Options) defaults() {
	if o.Version == 0 {
		o.Version = 3
	}
	if o.ToolResultMin == 0 {
		o.ToolResultMin = 1000
	}
	if o.ToolResultMax == 0 {
		o.ToolResultMax = 16000
	}
	if o.ImageEvery == 0 {
		o.ImageEvery = 1000
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	}
	if o.Cwd == "" {
		o.Cwd = "/home/dev/project"
	}
}

// gen holds the state of one session being generated.
type gen struct {
	o       Options
	r       *rand.Rand
	w       *bufio.Writer
	now     time.Time
	n       int      // entries written
	ids     []string // every id written, in order (v3)
	leaf    string
	leafNil bool
	idSeq   uint64
	lastCut int // index of the last compaction
	image   string
}

// Write writes one session to w and returns the number of bytes.
func Write(w io.Writer, o Options) (int64, error) {
	o.defaults()
	cw := &countWriter{w: w}
	g := &gen{o: o, r: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)), w: bufio.NewWriterSize(cw, 1<<20), now: o.Start, leafNil: true}
	sid := g.uuid()
	if o.Version == 1 {
		b := jsonl.NewObject(200).String("type", "session").String("id", sid).
			String("timestamp", jsonl.ISOTime(g.now)).String("cwd", o.Cwd).
			String("provider", "anthropic").String("modelId", "claude-sonnet-4-5").String("thinkingLevel", "medium")
		g.line(b.Bytes())
	} else {
		g.line(jsonl.NewHeaderLine(sid, g.now, o.Cwd, nil))
	}
	g.body()
	if err := g.w.Flush(); err != nil {
		return cw.n, err
	}
	return cw.n, cw.err
}

// WriteFile writes one session to path (0600) and returns its size.
func WriteFile(path string, o Options) (int64, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	if err := fsys.MkdirAll(filepath.Dir(path), vfs.DirMode); err != nil {
		return 0, err
	}
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, vfs.FileMode)
	if err != nil {
		return 0, err
	}
	n, err := Write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// Dir writes n sessions of about size bytes each into dir, with pi's file
// names, and returns the total size.
func Dir(dir string, n, size int, seed uint64) (int64, error) {
	var total int64
	for i := range n {
		o := Options{Seed: seed + uint64(i)*7919, ToolResultMin: 500, ToolResultMax: 6000, ImageEvery: -1,
			Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)}
		// About 1 KB per entry with these tool results.
		o.Entries = max(4, size/1000)
		g := &gen{o: o}
		g.o.defaults()
		name := layout.SessionFileName(o.Start, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, seed+uint64(i)))
		sz, err := WriteFile(filepath.Join(dir, name), o)
		if err != nil {
			return total, err
		}
		total += sz
	}
	return total, nil
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

func (g *gen) line(b []byte) {
	g.w.Write(b)
	g.w.WriteByte('\n')
}

func (g *gen) uuid() string {
	a, b := g.r.Uint64(), g.r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, 0x8000|b>>48&0x3fff, b&0xffffffffffff)
}

func (g *gen) newID() string {
	g.idSeq++
	// 8 hex digits, unique within the file: a bijective mix of the counter.
	x := uint32(g.idSeq*2654435761) ^ uint32(g.o.Seed)
	return fmt.Sprintf("%08x", x)
}

func (g *gen) tick() time.Time {
	g.now = g.now.Add(time.Duration(500+g.r.IntN(20000)) * time.Millisecond)
	return g.now
}

// entry writes an entry with the envelope; body adds type-specific members.
func (g *gen) entry(typ string, body func(b *jsonl.ObjectBuilder)) string {
	ts := g.tick()
	b := jsonl.NewObject(512).String("type", typ)
	id := ""
	if g.o.Version == 1 {
		b.String("timestamp", jsonl.ISOTime(ts))
		body(b)
	} else {
		id = g.newID()
		b.String("id", id)
		if g.leafNil {
			b.Null("parentId")
		} else {
			b.String("parentId", g.leaf)
		}
		b.String("timestamp", jsonl.ISOTime(ts))
		body(b)
		g.ids = append(g.ids, id)
		g.leaf, g.leafNil = id, false
	}
	g.line(b.Bytes())
	g.n++
	return id
}

var words = strings.Fields(`the a session file parser index tree branch leaf entry context model token
build test fails because function returns error when input is empty we should check length first then
append line newline sync lock writer reader compaction summary keep recent messages tool call result
bash read edit write grep path src main go json stream buffer memory allocation benchmark faster slower
config option default value flag command output status exit code retry timeout deadline cancel ok
refactor rename move extract helper interface struct method pointer slice map channel goroutine mutex`)

func (g *gen) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			if g.r.IntN(12) == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[g.r.IntN(len(words))])
		if g.r.IntN(40) == 0 {
			b.WriteString(` "quoted" <tag> & é`)
		}
	}
	return b.String()
}

// code makes tool-output-like text: numbered source lines, tabs, quotes.
func (g *gen) code(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%5d\t", i)
		switch g.r.IntN(5) {
		case 0:
			w := words[g.r.IntN(len(words))]
			fmt.Fprintf(&b, "func %s%s(ctx context.Context, %s []byte) error {\n", words[g.r.IntN(len(words))], strings.ToUpper(w[:1])+w[1:], words[g.r.IntN(len(words))])
		case 1:
			fmt.Fprintf(&b, "\tif err := %s(%q); err != nil {\n", words[g.r.IntN(len(words))], g.text(20))
		case 2:
			b.WriteString("\t\treturn fmt.Errorf(\"open %s: %w\", path, err)\n")
		default:
			b.WriteString("\t// " + g.text(40+g.r.IntN(40)) + "\n")
		}
	}
	return b.String()
}

func (g *gen) ms() float64 { return float64(g.now.UnixMilli()) }

func (g *gen) userMessage(withImage bool) {
	g.entry("message", func(b *jsonl.ObjectBuilder) {
		m := jsonl.NewObject(1024).String("role", "user")
		if withImage {
			if g.image == "" {
				raw := make([]byte, 75*1024)
				for i := range raw {
					raw[i] = byte(g.r.IntN(256))
				}
				g.image = base64.StdEncoding.EncodeToString(raw)
			}
			content := "[" + string(jsonl.NewObject(64).String("type", "text").String("text", g.text(80)).Bytes()) + "," +
				string(jsonl.NewObject(len(g.image)+64).String("type", "image").String("data", g.image).String("mimeType", "image/png").Bytes()) + "]"
			m.Raw("content", []byte(content))
		} else {
			m.String("content", g.text(40+g.r.IntN(400)))
		}
		m.Number("timestamp", g.ms())
		b.Raw("message", m.Bytes())
	})
}

var tools = []string{"read", "bash", "edit", "write", "grep"}

// assistant writes an assistant message; calls is the number of tool
// calls it makes (their ids are returned).
func (g *gen) assistant(calls int) []string {
	var ids []string
	g.entry("message", func(b *jsonl.ObjectBuilder) {
		var content strings.Builder
		content.WriteString("[")
		if g.r.IntN(3) > 0 {
			content.Write(jsonl.NewObject(512).String("type", "thinking").String("thinking", g.text(80+g.r.IntN(360))).
				String("thinkingSignature", g.token(40)).Bytes())
			content.WriteString(",")
		}
		content.Write(jsonl.NewObject(512).String("type", "text").String("text", g.text(40+g.r.IntN(260))).Bytes())
		for range calls {
			id := "toolu_" + g.token(20)
			ids = append(ids, id)
			name := tools[g.r.IntN(len(tools))]
			args := jsonl.NewObject(128).String("path", "src/"+words[g.r.IntN(len(words))]+".go")
			if name == "bash" {
				args = jsonl.NewObject(128).String("command", "go test ./... 2>&1 | tail -"+fmt.Sprint(g.r.IntN(50)))
			}
			content.WriteString(",")
			content.Write(jsonl.NewObject(256).String("type", "toolCall").String("id", id).String("name", name).
				Raw("arguments", args.Bytes()).Bytes())
		}
		content.WriteString("]")
		in, out, cr := 1000+g.r.IntN(50000), 50+g.r.IntN(2000), g.r.IntN(40000)
		usage := jsonl.NewObject(256).Number("input", float64(in)).Number("output", float64(out)).
			Number("cacheRead", float64(cr)).Number("cacheWrite", 0).Number("totalTokens", float64(in+out+cr)).
			Raw("cost", jsonl.NewObject(128).Number("input", round(float64(in)*3e-6)).Number("output", round(float64(out)*15e-6)).
				Number("cacheRead", round(float64(cr)*3e-7)).Number("cacheWrite", 0).
				Number("total", round(float64(in)*3e-6+float64(out)*15e-6+float64(cr)*3e-7)).Bytes())
		stop := "stop"
		if calls > 0 {
			stop = "toolUse"
		}
		m := jsonl.NewObject(2048).String("role", "assistant").Raw("content", []byte(content.String())).
			String("api", "anthropic-messages").String("provider", "anthropic").String("model", "claude-sonnet-4-5").
			Raw("usage", usage.Bytes()).String("stopReason", stop).Number("timestamp", g.ms())
		b.Raw("message", m.Bytes())
	})
	return ids
}

func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }

func (g *gen) token(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) toolResult(callID string) {
	// Sizes between min and max with density proportional to 1/x^2: most
	// outputs are short, a few are long (mean about 3.2 KB for 1-20 KB).
	lo, hi := 1/float64(g.o.ToolResultMin), 1/float64(g.o.ToolResultMax)
	size := int(1 / (lo - g.r.Float64()*(lo-hi)))
	g.entry("message", func(b *jsonl.ObjectBuilder) {
		content := "[" + string(jsonl.NewObject(size+64).String("type", "text").String("text", g.code(size)).Bytes()) + "]"
		m := jsonl.NewObject(size+256).String("role", "toolResult").String("toolCallId", callID).
			String("toolName", tools[g.r.IntN(len(tools))]).Raw("content", []byte(content)).
			Bool("isError", g.r.IntN(20) == 0).Number("timestamp", g.ms())
		b.Raw("message", m.Bytes())
	})
}

// body writes the entries: turns of user, assistant and tool results, with
// the odd branch, label, name, model change and compaction.
func (g *gen) body() {
	g.entry("model_change", func(b *jsonl.ObjectBuilder) {
		b.String("provider", "anthropic").String("modelId", "claude-sonnet-4-5")
	})
	g.entry("thinking_level_change", func(b *jsonl.ObjectBuilder) { b.String("thinkingLevel", "medium") })
	nextImage := g.o.ImageEvery
	for g.n < g.o.Entries {
		// A turn.
		img := g.o.ImageEvery > 0 && g.n >= nextImage
		if img {
			nextImage += g.o.ImageEvery
		}
		g.userMessage(img)
		steps := g.r.IntN(3)
		for s := 0; s <= steps && g.n < g.o.Entries; s++ {
			calls := 0
			if s < steps {
				calls = 1
				if g.r.IntN(4) == 0 {
					calls = 2
				}
			}
			for _, id := range g.assistant(calls) {
				if g.n >= g.o.Entries {
					break
				}
				g.toolResult(id)
			}
		}
		if g.n >= g.o.Entries {
			break
		}
		switch k := g.r.IntN(200); {
		case k < 3 && g.o.Version == 3 && len(g.ids) > 10:
			// Branch back to an earlier entry: the next turn starts there.
			g.leaf = g.ids[len(g.ids)-1-g.r.IntN(min(len(g.ids)-1, 40))]
		case k < 5 && g.o.Version == 3:
			target := g.ids[g.r.IntN(len(g.ids))]
			g.entry("label", func(b *jsonl.ObjectBuilder) {
				b.String("targetId", target).String("label", words[g.r.IntN(len(words))])
			})
		case k < 6 && g.o.Version == 3:
			g.entry("session_info", func(b *jsonl.ObjectBuilder) { b.String("name", g.text(30)) })
		case k < 8:
			g.entry("model_change", func(b *jsonl.ObjectBuilder) {
				b.String("provider", "openai").String("modelId", "gpt-5")
			})
		}
		if g.n-g.lastCut > 5000 && g.n < g.o.Entries {
			g.compaction()
		}
	}
}

func (g *gen) compaction() {
	keepBack := 20 + g.r.IntN(60)
	g.entry("compaction", func(b *jsonl.ObjectBuilder) {
		b.String("summary", "## Goal\n"+g.text(300)+"\n## Progress\n"+g.text(600))
		if g.o.Version == 1 {
			// Index into the parsed lines, the header being 0.
			b.Number("firstKeptEntryIndex", float64(max(1, g.n-keepBack)))
		} else {
			b.String("firstKeptEntryId", g.ids[max(0, len(g.ids)-keepBack)])
		}
		b.Number("tokensBefore", float64(100000+g.r.IntN(50000)))
		if g.o.Version == 3 {
			b.Raw("details", []byte(`{"readFiles":["src/a.go"],"modifiedFiles":["src/b.go"]}`)).Bool("fromHook", false)
		}
	})
	g.lastCut = g.n
}
