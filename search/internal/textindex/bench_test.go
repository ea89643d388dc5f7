package textindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// sessionText generates session-like documents: user prompts, assistant
// text and thinking (prose over a Zipf vocabulary of real English words
// and 60,000 made-up ones, with identifiers and paths), tool calls
// (commands and paths) and tool results (source code with numbered
// lines, identifiers, numbers, hashes), in the proportions of pi's
// sessions (tool results most of the bytes, most of them short).
type sessionText struct {
	r     *rand.Rand
	words []string
	zipf  *rand.Zipf
	b     strings.Builder
}

var english = strings.Fields(`the of and to a in is it you that he was for on are with as I his they be at one have
this from or had by not word but what some we can out other were all there when up use your how said an each she
which do their time if will way about many then them write would like so these her long make thing see him two has
look more day could go come did number sound no most people my over know water than call first who may down side
been now find any new work part take get place made live where after back little only round man year came show
every good me give our under name very through just form sentence great think say help low line differ turn cause
much mean before move right boy old too same tell does set three want air well also play small end put home read
hand port large spell add even land here must big high such follow act why ask men change went light kind off need
house picture try us again animal point mother world near build self earth father head stand own page should
country found answer school grow study still learn plant cover food sun four between state keep eye never last let
thought city tree cross farm hard start might story saw far sea draw left late run don't while press close night
real life few north file function error test build commit branch merge session index query segment return value
string byte buffer config option flag path directory package module import export struct method interface`)

func newSessionText(seed uint64) *sessionText {
	g := &sessionText{r: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	g.words = append(g.words, english...)
	const syll = "ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo za ze zi zo str tion ing er ex pre con"
	ss := strings.Fields(syll)
	for i := 0; len(g.words) < 60000; i++ {
		n := 1 + g.r.IntN(4)
		var w strings.Builder
		for range n {
			w.WriteString(ss[g.r.IntN(len(ss))])
		}
		g.words = append(g.words, w.String())
	}
	g.zipf = rand.NewZipf(g.r, 1.07, 2, uint64(len(g.words)-1))
	return g
}

func (g *sessionText) word() string { return g.words[g.zipf.Uint64()] }

func (g *sessionText) ident() string {
	a, b := g.word(), g.word()
	switch g.r.IntN(4) {
	case 0:
		return a + strings.ToUpper(b[:1]) + b[1:]
	case 1:
		return a + "_" + b
	case 2:
		return strings.ToUpper(a[:1]) + a[1:]
	}
	return a
}

func (g *sessionText) prose(n int) {
	start := g.b.Len()
	for g.b.Len()-start < n {
		switch k := g.r.IntN(40); {
		case k == 0:
			fmt.Fprintf(&g.b, " `%s()`", g.ident())
		case k == 1:
			fmt.Fprintf(&g.b, " src/%s/%s.go:%d", g.word(), g.word(), g.r.IntN(900))
		case k < 4:
			g.b.WriteString(". ")
			w := g.word()
			g.b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		default:
			g.b.WriteByte(' ')
			g.b.WriteString(g.word())
		}
	}
}

func (g *sessionText) code(n int) {
	start := g.b.Len()
	for i := 1; g.b.Len()-start < n; i++ {
		fmt.Fprintf(&g.b, "%5d\t", i)
		switch g.r.IntN(7) {
		case 0:
			fmt.Fprintf(&g.b, "func (%s *%s) %s(ctx context.Context, %s []byte) (int, error) {\n", g.word()[:1], g.ident(), g.ident(), g.word())
		case 1:
			fmt.Fprintf(&g.b, "\tif err := %s.%s(%q); err != nil {\n", g.word(), g.ident(), g.word()+" "+g.word())
		case 2:
			fmt.Fprintf(&g.b, "\t\treturn fmt.Errorf(\"%s %%s: %%w\", %s, err)\n", g.word(), g.ident())
		case 3:
			fmt.Fprintf(&g.b, "\t%s := %s[%d:%d] // %x\n", g.ident(), g.word(), g.r.IntN(100), g.r.IntN(10000), g.r.Uint32())
		case 4:
			fmt.Fprintf(&g.b, "ok  \tgithub.com/%s/%s/%s\t%d.%03ds\n", g.word(), g.word(), g.word(), g.r.IntN(10), g.r.IntN(1000))
		default:
			g.b.WriteString("\t// ")
			g.prose(30 + g.r.IntN(60))
			g.b.WriteByte('\n')
		}
	}
}

// next returns the next document's text and role (0 user, 1 text,
// 2 thinking, 3 tool call, 4 tool result) and tool.
func (g *sessionText) next() (string, uint8, string) {
	g.b.Reset()
	tools := [...]string{"read", "bash", "edit", "write", "grep"}
	switch k := g.r.IntN(20); {
	case k < 2:
		g.prose(40 + g.r.IntN(400))
		return g.b.String(), 0, ""
	case k < 5:
		g.prose(40 + g.r.IntN(800))
		return g.b.String(), 1, ""
	case k < 8:
		g.prose(80 + g.r.IntN(1200))
		return g.b.String(), 2, ""
	case k < 12:
		fmt.Fprintf(&g.b, `{"path":"src/%s/%s.go","command":"go test ./%s/... -run %s"}`, g.word(), g.ident(), g.word(), g.ident())
		return g.b.String(), 3, tools[g.r.IntN(len(tools))]
	}
	// Tool results: 1/x^2 sizes between 500 and 16,000 bytes.
	lo, hi := 1/500.0, 1/16000.0
	g.code(int(1 / (lo - g.r.Float64()*(lo-hi))))
	return g.b.String(), 4, tools[g.r.IntN(len(tools))]
}

// docsOf returns documents of about size bytes of text.
func docsOf(seed uint64, size int64) ([]Doc, int64) {
	g := newSessionText(seed)
	var docs []Doc
	var total int64
	for total < size {
		text, role, tool := g.next()
		docs = append(docs, Doc{ID: uint64(len(docs) + 1), Text: text, Role: role, Tool: tool, Ref: uint64(len(docs)) * 977, Time: int64(len(docs)) * 1000})
		total += int64(len(text))
	}
	return docs, total
}

func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkBuild builds an index of 64 MB of session-like text with the
// default budget, on the real filesystem: MB/s (of text), MB per
// CPU-second and the index's size as a fraction of the text.
func BenchmarkBuild(b *testing.B) {
	size := int64(64 << 20)
	if s := os.Getenv("TEXTINDEX_BENCH_MB"); s != "" {
		n, _ := strconv.Atoi(s)
		size = int64(n) << 20
	}
	docs, total := docsOf(1, size)
	b.SetBytes(total)
	b.ResetTimer()
	var cpu time.Duration
	var ratio float64
	for b.Loop() {
		dir := b.TempDir()
		c0 := cpuTime()
		ix, err := Open(vfs.OS(), dir)
		if err != nil {
			b.Fatal(err)
		}
		bl := ix.NewBuilder(BuildOptions{})
		for _, d := range docs {
			if err := bl.Add(d); err != nil {
				b.Fatal(err)
			}
		}
		if err := bl.Commit(); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		ratio = float64(dirSize(dir)) / float64(total)
		ix.Close()
	}
	if cpu > 0 {
		b.ReportMetric(float64(total)*float64(b.N)/1e6/cpu.Seconds(), "MB/CPU-s")
	}
	b.ReportMetric(ratio, "index/text")
}

// BenchmarkMerge merges the segments of an index of 64 MB of text (built
// with a 16 MiB budget, so in several segments) into one.
func BenchmarkMerge(b *testing.B) {
	docs, total := docsOf(2, 64<<20)
	b.SetBytes(total)
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		ix, _ := Open(vfs.OS(), dir)
		bl := ix.NewBuilder(BuildOptions{Budget: 16 << 20})
		for _, d := range docs {
			if err := bl.Add(d); err != nil {
				b.Fatal(err)
			}
		}
		if err := bl.Commit(); err != nil {
			b.Fatal(err)
		}
		segs := ix.Stats().Segments
		b.StartTimer()
		if err := ix.Merge(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(segs), "segments")
		ix.Close()
	}
}

// queryIndex returns an index of about 400 MB of session-like text
// (TEXTINDEX_BENCH_MB to change), built once into
// $TEXTINDEX_BENCH_DIR (or the temporary directory) and kept there for
// later runs, with one rare word in a handful of documents.
func queryIndex(b *testing.B) string {
	mb := 400
	if s := os.Getenv("TEXTINDEX_BENCH_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	root := os.Getenv("TEXTINDEX_BENCH_DIR")
	if root == "" {
		root = os.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("textindex-bench-%dmb-v%d", mb, formatVer))
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	ix, err := Open(vfs.OS(), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	g := newSessionText(3)
	bl := ix.NewBuilder(BuildOptions{})
	var total int64
	t0, c0 := time.Now(), cpuTime()
	for id := uint64(1); total < int64(mb)<<20; id++ {
		text, role, tool := g.next()
		if id%400009 == 0 {
			text += " the zyzzyvaquux showed up"
		}
		if err := bl.Add(Doc{ID: id, Text: text, Role: role, Tool: tool, Ref: id, Time: int64(id)}); err != nil {
			b.Fatal(err)
		}
		total += int64(len(text))
	}
	if err := bl.Commit(); err != nil {
		b.Fatal(err)
	}
	built, cpu := time.Since(t0), cpuTime()-c0
	segs := ix.Stats().Segments
	t1 := time.Now()
	if err := ix.Merge(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d MB of text in %v (%.0f MB/s, %.0f MB/CPU-s), %d segments merged in %v; index %.3fx the text",
		total>>20, built.Round(time.Millisecond), float64(total)/1e6/built.Seconds(), float64(total)/1e6/cpu.Seconds(),
		segs, time.Since(t1).Round(time.Millisecond), float64(dirSize(dir))/float64(total))
	return dir
}

// BenchmarkQueryNewIndex opens the index and runs one query each time,
// as a new process would (with the files in the page cache): a rare
// word, a common one and a phrase of common words, with limit 20.
func BenchmarkQueryNewIndex(b *testing.B) {
	dir := queryIndex(b)
	for _, q := range []string{"zyzzyvaquux", "the", `"the of"`, "the zyzzyvaquux", "erro*"} {
		b.Run(q, func(b *testing.B) {
			var hits int
			for b.Loop() {
				ix, err := Open(vfs.OS(), dir)
				if err != nil {
					b.Fatal(err)
				}
				h, err := ix.Search(context.Background(), Query{Clauses: ParseQuery(q), Limit: 20})
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
				ix.Close()
			}
			b.ReportMetric(float64(hits), "hits")
		})
	}
}

// BenchmarkQueryOpen runs the same queries on an open index (a resident
// process, sessctl serve).
func BenchmarkQueryOpen(b *testing.B) {
	dir := queryIndex(b)
	ix, err := Open(vfs.OS(), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"zyzzyvaquux", "the", `"the of"`, "the zyzzyvaquux"} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.Search(context.Background(), Query{Clauses: ParseQuery(q), Limit: 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
