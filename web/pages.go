package web

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout/vfs"
)

// The templates, styles and script are embedded in the binary: the pages
// load nothing from anywhere else, and work offline.
//
//go:embed assets
var assets embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"inc":  func(i int) int { return i + 1 },
	"frac": func(v, m float64) float64 { return v / max(m, 1e-12) },
	"strs": func(s ...string) []string { return s },
}).ParseFS(assets, "assets/templates/*.html"))

// page is what every page's layout needs.
type page struct {
	Title   string
	Base    string
	CSRF    string
	Refresh int // seconds before the page reloads itself (0: never)
	Stores  []string
}

type loadingPage struct {
	page
	What      string
	Done, All int64
}

type messagePage struct {
	page
	Status  int
	Message string
	Hint    string
	Back    string
}

func (h *Handler) page(r *http.Request, title string) page {
	p := page{Title: title, Base: h.base, CSRF: h.csrf}
	for _, s := range h.stores {
		p.Stores = append(p.Stores, s.Name+" ("+s.Format.String()+"): "+s.root)
	}
	return p
}

// queryCount returns the query parameter name as a whole number of 0 or
// more written in decimal digits, def when it is absent or empty; a value
// that is not one, or that overflows an int, is a refusedError (400).
func queryCount(q url.Values, name string, def int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	bad := len(v) > 19
	for i := 0; i < len(v) && !bad; i++ {
		bad = v[i] < '0' || v[i] > '9'
	}
	n, err := strconv.Atoi(v)
	if bad || err != nil {
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return 0, &refusedError{"?" + name + "= must be a whole number of 0 or more, not " + strconv.Quote(v)}
	}
	return n, nil
}

func (h *Handler) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", h.serveList)
	m.HandleFunc("GET /s/{store}/{rel...}", h.serveSession)
	m.HandleFunc("GET /entry/{store}/{rel...}", h.serveEntry)
	m.HandleFunc("GET /tree/{store}/{rel...}", h.serveTree)
	m.HandleFunc("GET /a/{store}/{rel...}", h.serveAgentUse)
	m.HandleFunc("GET /events/s/{store}/{rel...}", h.serveEvents)
	m.HandleFunc("GET /events/a/{store}/{rel...}", h.serveAgentUseEvents)
	m.HandleFunc("POST /act/{act}/{store}/{rel...}", h.serveAct)
	m.HandleFunc("/act/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "an act is a POST from a session page", http.StatusMethodNotAllowed)
	})
	m.HandleFunc("GET /export/s/{store}/{rel...}", h.serveExport)
	m.HandleFunc("GET /export/a/{store}/{rel...}", h.serveExportAgentUse)
	m.HandleFunc("GET /search", h.serveSearch)
	m.HandleFunc("GET /stats", h.serveStats)
	m.HandleFunc("GET /api/usage", h.serveUsage)
	m.HandleFunc("GET /static/{file}", h.serveStatic)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "message", messagePage{page: h.page(r, "Not found"), Status: http.StatusNotFound,
			Message: "There is no such page.", Back: h.path("/")})
	})
	return m
}

// render writes the template name with data as a whole page (rendered to
// memory first, so that a failure never leaves half a page).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		h.logf("render %s: %v", name, err)
		http.Error(w, "the page could not be made: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		if _, err := w.Write(buf.Bytes()); err != nil {
			h.logf("write %s: %v", r.URL.Path, err)
		}
	}
}

// failPage answers a request whose session or act failed, with the status
// its kind maps to.
func (h *Handler) failPage(w http.ResponseWriter, r *http.Request, err error) {
	p := messagePage{page: h.page(r, "Error"), Message: err.Error(), Back: h.path("/")}
	var re *refusedError
	switch {
	case errors.Is(err, errOutside):
		p.Status, p.Message = http.StatusNotFound, "This is not a session of the viewer's stores."
	case errors.As(err, &re):
		p.Status = http.StatusBadRequest
		if strings.HasPrefix(re.msg, "refused:") {
			p.Status = http.StatusConflict
			p.Title = "Refused"
		}
	case errors.Is(err, engine.ErrNotFound):
		p.Status = http.StatusNotFound
	case errors.Is(err, engine.ErrAmbiguous):
		p.Status = http.StatusBadRequest
	case errors.Is(err, engine.ErrCorrupt), errors.Is(err, engine.ErrUnsupportedVersion):
		p.Status = http.StatusUnprocessableEntity
		p.Hint = h.o.DamagedHint
	case errors.Is(err, engine.ErrLocked), errors.Is(err, engine.ErrBusy):
		p.Status = http.StatusConflict
	case errors.Is(err, vfs.ErrSymlink):
		p.Status = http.StatusBadRequest
		p.Hint = "A session reached through a symbolic link is only read; open the file it points to to change it."
	default:
		p.Status = http.StatusInternalServerError
	}
	if store, rel := r.PathValue("store"), r.PathValue("rel"); store != "" && rel != "" && h.storeByKey(store) != nil &&
		!strings.HasPrefix(r.URL.Path, "/s/") && !strings.HasPrefix(r.URL.Path, "/a/") {
		// An act, an export or an entry of a session: back to its page.
		kind := "/s/"
		if strings.HasPrefix(r.URL.Path, "/a/") || strings.HasPrefix(r.URL.Path, "/export/a/") || strings.HasPrefix(r.URL.Path, "/events/a/") {
			kind = "/a/"
		}
		if !errors.Is(err, errOutside) {
			p.Back = h.path(kind + store + "/" + escapeRel(rel))
		}
	}
	h.render(w, r, p.Status, "message", p)
}

// serveStatic serves the embedded styles and script, and nothing else.
func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name != path.Base(name) || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	sub, _ := fs.Sub(assets, "assets/static")
	b, err := fs.ReadFile(sub, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}
