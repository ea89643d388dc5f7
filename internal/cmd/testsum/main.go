// Command testsum turns `go test -json` output into what a person waiting
// for `make test` wants to see: one line per package as it finishes (with
// its time), the output of every failed test, and at the end one line per
// kind of skipped test with the reason its skip message gives (which says
// how to enable it: "run scripts/pi-install.sh", ...).
//
// Usage:
//
//	go test -json ./... | go run ./internal/cmd/testsum
//
// It exits 1 when a test or a build failed, or when the input holds no
// test result at all.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (test2json's TestEvent, plus the
// build events of Go 1.24 and later).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string
	FailedBuild string
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, time.Now))
}

// key names one test of one package.
type key struct{ pkg, test string }

// summary is what run gathers from the event stream.
type summary struct {
	out      io.Writer
	output   map[key][]string // output of tests still running, to print if they fail
	build    map[string][]string
	skips    map[string][]key // skip reason -> tests
	failed   []key
	packages int
	pkgFail  int
	results  int
}

func run(in io.Reader, out io.Writer, now func() time.Time) int {
	start := now()
	s := &summary{out: out, output: map[key][]string{}, build: map[string][]string{}, skips: map[string][]key{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// Not an event: go's own messages (a build that failed
			// before any test ran, a vet report). Show them as they are.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		s.add(ev)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsum: reading go test output: %v\n", err)
		return 1
	}
	s.report(now().Sub(start))
	if len(s.failed) > 0 || s.pkgFail > 0 || s.results == 0 {
		return 1
	}
	return 0
}

func (s *summary) add(ev event) {
	switch ev.Action {
	case "build-output":
		s.build[ev.ImportPath] = append(s.build[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		fmt.Fprintf(s.out, "BUILD FAIL %s\n%s", ev.ImportPath, strings.Join(s.build[ev.ImportPath], ""))
		s.pkgFail++
		return
	}
	k := key{ev.Package, ev.Test}
	switch ev.Action {
	case "output":
		s.output[k] = append(s.output[k], ev.Output)
	case "pass":
		s.results++
		delete(s.output, k)
		if ev.Test == "" {
			s.packages++
			fmt.Fprintf(s.out, "ok    %-50s %6.1fs\n", ev.Package, ev.Elapsed)
		}
	case "skip":
		s.results++
		if ev.Test == "" {
			// A package without tests, or skipped whole.
			delete(s.output, k)
			return
		}
		reason := skipReason(s.output[k])
		delete(s.output, k)
		s.skips[reason] = append(s.skips[reason], k)
	case "fail":
		s.results++
		if ev.Test == "" {
			s.packages++
			s.pkgFail++
			fmt.Fprintf(s.out, "FAIL  %-50s %6.1fs\n", ev.Package, ev.Elapsed)
			if lines := s.output[k]; len(lines) > 0 {
				// Output of the package itself: a panic, a timeout, TestMain.
				fmt.Fprint(s.out, indent(lines))
			}
			delete(s.output, k)
			return
		}
		s.failed = append(s.failed, k)
		fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n%s", ev.Test, ev.Package, indent(s.output[k]))
		delete(s.output, k)
	}
}

// fileLine is the "name_test.go:123: " prefix t.Skip puts before its message.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the message of a skipped test: its output but for the
// "=== RUN", "--- SKIP" framing and the file:line prefix.
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, strings.TrimSpace(fileLine.ReplaceAllString(l, "")))
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	// The reason is the skip message, the last thing the test said.
	return msg[len(msg)-1]
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (s *summary) report(elapsed time.Duration) {
	fmt.Fprintf(s.out, "\n%s, %s failed, %s failed, %s\n", plural(s.packages, "package"),
		plural(len(s.failed), "test"), plural(s.pkgFail, "package"), elapsed.Round(time.Second))
	if len(s.skips) == 0 {
		fmt.Fprintln(s.out, "no tests skipped")
		return
	}
	reasons := make([]string, 0, len(s.skips))
	for r := range s.skips {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if a, b := len(s.skips[reasons[i]]), len(s.skips[reasons[j]]); a != b {
			return a > b
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintln(s.out, "skipped:")
	for _, r := range reasons {
		ks := s.skips[r]
		pkgs := map[string]bool{}
		for _, k := range ks {
			pkgs[shortPkg(k.pkg)] = true
		}
		names := make([]string, 0, len(pkgs))
		for p := range pkgs {
			names = append(names, p)
		}
		sort.Strings(names)
		fmt.Fprintf(s.out, "  %s (%d in %s)\n", r, len(ks), strings.Join(names, ", "))
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/sessctl/sessctl/")
}
