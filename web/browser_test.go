package web

import (
	"bufio"
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// TestInABrowser drives the viewer in headless Chromium as a person would:
// the list, a session, a live append by pi, a fork from an entry found in
// the list, a search, and a screenshot that shows something. The pages'
// script must run under the Content-Security-Policy, and the page must
// log no violation of it.
func TestInABrowser(t *testing.T) {
	b := testenv.NewBrowser(t, 1280, 900)
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	other := writeFixture(t, s.root, "/w/lib")

	// The list, reached through the URL with the token.
	b.Navigate(s.h.URL())
	b.WaitFor(`document.querySelectorAll("#sessions tbody tr").length === 2`, 20*time.Second)
	var href string
	b.MustEval(`location.href`, &href)
	if strings.Contains(href, "token") {
		t.Errorf("the token stays in the address bar: %s", href)
	}
	b.WaitFor(`document.body.classList.contains("js")`, 10*time.Second) // the script ran under the CSP
	b.WaitFor(`Array.from(document.querySelectorAll("td.cost")).every(c => !c.dataset.cost && c.textContent.startsWith("$"))`, 20*time.Second)
	shot := b.Screenshot()
	if n := inkedPixels(t, shot); n < 2000 {
		t.Errorf("the list's screenshot is nearly blank: %d pixels differ from the background", n)
	}

	// A session, opened from the list.
	page := s.page(f.file)
	b.MustEval(`document.querySelector('a[href="`+page+`"]').click()`, nil)
	b.WaitFor(`location.pathname === "`+page+`" && document.readyState === "complete"`, 20*time.Second)
	b.WaitFor(`document.querySelectorAll("#entries > li.entry").length > 5`, 10*time.Second)
	b.WaitFor(`document.querySelector(".session").dataset.connected === "1"`, 20*time.Second)
	var folded bool
	b.MustEval(`!document.querySelector("details.fold.thinking").open`, &folded)
	if !folded {
		t.Error("thinking is not folded")
	}

	// sessctl's engine appends: the entry appears, and the holder.
	w := openWriter(t, f.file)
	id, err := w.AppendMessage(message.NewUser("written while the page is open", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	b.WaitFor(`document.getElementById("e-`+id+`") !== null`, 20*time.Second)
	b.WaitFor(`document.getElementById("holder").textContent.includes("written by pid `+strconv.Itoa(os.Getpid())+` (test-writer)")`, 20*time.Second)
	w.Close()
	b.WaitFor(`document.getElementById("holder").textContent.includes("no writer holds the lock")`, 20*time.Second)

	// pi appends to the session: its entries appear in the page.
	t.Run("pi appends", func(t *testing.T) {
		node, modules := testenv.Pi(t)
		cmd := exec.Command(node, filepath.Join(testenv.RepoRoot(t), "scripts", "pi-writer.mjs"), modules, f.file, "30", "3", "40")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var ids []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			ids = append(ids, sc.Text())
		}
		if err := cmd.Wait(); err != nil || len(ids) != 3 {
			t.Fatalf("pi-writer: %v, %d ids\n%s", err, len(ids), stderr.String())
		}
		for _, id := range ids {
			b.WaitFor(`document.getElementById("e-`+id+`") !== null`, 20*time.Second)
		}
		var text string
		b.MustEval(`document.getElementById("e-`+ids[2]+`").innerText`, &text)
		if !strings.Contains(text, "tool result · bash") || !strings.Contains(text, "output 2: ") {
			t.Errorf("pi's entry shows as %q", text)
		}
		b.WaitFor(`document.getElementById("holder").textContent.includes("no writer lock was held") || document.getElementById("holder").textContent.includes("without a writer lock")`, 20*time.Second)
		b.WaitFor(`document.querySelector('#tree a[data-id="`+ids[2]+`"]') !== null`, 20*time.Second)
	})

	// Fork from an entry (the tool result): the new session's page, then
	// the list shows it under its parent.
	b.MustEval(`(() => { const e = document.getElementById("e-`+f.result+`"); e.querySelector("details.acts").open = true; e.querySelector("button.fork").click(); })()`, nil)
	b.WaitFor(`location.search.includes("done=fork") && document.readyState === "complete"`, 20*time.Second)
	var forkPath string
	b.MustEval(`location.pathname`, &forkPath)
	if forkPath == page {
		t.Fatal("the fork stayed on the source's page")
	}
	b.WaitFor(`document.getElementById("done").textContent.startsWith("Forked")`, 5*time.Second)
	b.WaitFor(`document.getElementById("e-`+f.result+`") !== null`, 5*time.Second)
	b.MustEval(`document.querySelector("header.top nav a").click()`, nil)
	b.WaitFor(`location.pathname === "/" && document.querySelector('tr.child a[href="`+forkPath+`"]') !== null`, 20*time.Second)

	// Search, through the form.
	b.Navigate(s.origin + "/search")
	b.MustEval(`(() => { const q = document.querySelector('input[name="q"]'); q.value = "vendor"; q.form.submit(); })()`, nil)
	b.WaitFor(`document.querySelectorAll("#hits li.hit").length >= 2`, 30*time.Second)
	var text string
	b.MustEval(`document.querySelector("#hits mark").textContent`, &text)
	if !strings.EqualFold(text, "vendor") {
		t.Errorf("the match is marked as %q", text)
	}
	b.MustEval(`document.querySelector('#hits a[href^="`+s.page(other.file)+`"]') !== null`, new(bool))

	for _, l := range b.Logs() {
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Refused to") {
			t.Errorf("the page broke its own policy: %s", l)
		}
	}
}

// inkedPixels counts the pixels of a PNG that differ from its top-left
// pixel (the background).
func inkedPixels(t *testing.T, b []byte) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bg := img.At(0, 0)
	br, bgc, bb, _ := bg.RGBA()
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != br || g != bgc || b != bb {
				n++
			}
		}
	}
	return n
}
