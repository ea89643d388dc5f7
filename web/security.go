package web

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The rules every request passes before it reaches a page (ServeHTTP):
//
//  1. the Host header names the bound address (hostRule), else 421;
//  2. the token: ?token=T sets the cookie and redirects to the URL
//     without it; otherwise the cookie must hold the handler's secret
//     (drawn by New, never the token), else 401;
//  3. GET and HEAD read, POST writes, anything else is 405;
//  4. a POST carries the page's CSRF token (form field "csrf"), and its
//     Origin and Sec-Fetch-Site, when the browser sends them, are this
//     server's, else 403.
//
// Every response carries the security headers (setSecurityHeaders).

// contentSecurityPolicy allows nothing but the handler's own scripts,
// styles and connections, images it embeds as data: URIs, and forms
// posted to itself; no frames, plugins or base URL changes.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders sets the headers every response carries.
func setSecurityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer Chromium sends
	// "Origin: null" with a form's POST, which crossSite must refuse.
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
}

// hostRule says which Host headers name the server.
type hostRule struct {
	host     string // the bound host (an IP address or a name)
	port     string
	loopback bool // the bound host is a loopback address
	any      bool // the bound host is unspecified (0.0.0.0, ::)
}

func parseHostRule(addr string) (hostRule, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hostRule{}, err
	}
	if port == "" || port == "0" {
		return hostRule{}, fmt.Errorf("no port: give the address the listener reports")
	}
	r := hostRule{host: strings.ToLower(host), port: port}
	if ip := net.ParseIP(host); ip != nil {
		r.loopback = ip.IsLoopback()
		r.any = ip.IsUnspecified()
		r.host = ip.String()
	} else if r.host == "localhost" {
		r.loopback = true
	}
	return r, nil
}

// allows reports whether a Host header names the server: the bound
// address; localhost with the port for a loopback one; any IP address
// with the port for an unspecified one. Never another DNS name: that is
// what DNS rebinding needs.
func (r hostRule) allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil || port != r.port {
		return false
	}
	host = strings.ToLower(host)
	if ip := net.ParseIP(host); ip != nil {
		return ip.String() == r.host || r.any
	}
	if host == r.host {
		return true
	}
	return host == "localhost" && (r.loopback || r.any)
}

// ServeHTTP serves a request that passes the checks of the package
// documentation's Security section: the Host header, the token, the
// method, and for a write the CSRF token and origin.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if !h.hosts.allows(r.Host) {
		http.Error(w, "this server answers only to the address it is bound to, not "+quoteHeader(r.Host), http.StatusMisdirectedRequest)
		return
	}
	if h.ctx.Err() != nil {
		http.Error(w, "the viewer is closed", http.StatusServiceUnavailable)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" {
		if !h.tokenOK(t) {
			h.denied(w)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "the token goes in the URL of a GET request only", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: h.cookie, Value: h.secret, Path: h.cookiePath(), HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		u.Scheme, u.Host = "", ""
		to := u.RequestURI()
		if !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") || strings.HasPrefix(to, "/\\") {
			to = "/" // never a redirect to another host
		}
		http.Redirect(w, r, h.base+to, http.StatusSeeOther)
		return
	}
	c, err := r.Cookie(h.cookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(h.secret)) != 1 {
		h.denied(w)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if why := h.crossSite(r); why != "" {
			http.Error(w, "refused: "+why, http.StatusForbidden)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// tokenOK compares a token with the handler's in constant time.
func (h *Handler) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(h.token)) == 1
}

func (h *Handler) cookiePath() string {
	if h.base == "" {
		return "/"
	}
	return h.base + "/"
}

// denied answers a request without the token.
func (h *Handler) denied(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, "this page needs the token: open the URL with the token that the server printed (http://ADDRESS/?token=...)\n")
}

// crossSite returns why a POST is refused, "" when it may write: it must
// carry the page's CSRF token, and come from this server's pages.
func (h *Handler) crossSite(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "a write from another site (Sec-Fetch-Site: " + quoteHeader(site) + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host || u.Scheme != "http" {
			return "a write from another origin (" + quoteHeader(o) + ")"
		}
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		return "a form that could not be read: " + err.Error()
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(h.csrf)) != 1 {
		return "the form's CSRF token is missing or wrong (reload the page and try again)"
	}
	return ""
}

// quoteHeader quotes a header value for an error text.
func quoteHeader(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return fmt.Sprintf("%q", s)
}
