package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/lock"
)

// The acts: the only requests that write, each a POST from a session
// page (checked by ServeHTTP: token, CSRF, origin), each through the
// engine. Fork copies the branch up to an entry into a new session
// (Store.Fork: the source is only read); branch, label and rename open
// the session for writing, which takes its writer lock, and append one
// entry. A session another writer holds is refused with the holder named,
// and nothing is written.

// lockWait is how long an act waits for a session's writer lock before it
// is refused: long enough to ride out another viewer's instant probe of
// the lock (lock.Inspect), short enough to answer at once when a writer
// holds it.
const lockWait = 500 * time.Millisecond

// errRefused wraps the reason an act was refused.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func (h *Handler) serveAct(w http.ResponseWriter, r *http.Request) {
	act := r.PathValue("act")
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	entry := r.PostForm.Get("entry")
	text := r.PostForm.Get("text")
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) || !utf8.ValidString(entry) {
		h.failPage(w, r, &refusedError{"the text holds a NUL byte or is not UTF-8; nothing was written"})
		return
	}
	self := h.sessionURL(path, layout.FormatJSONL)
	ctx := r.Context()
	switch act {
	case "fork":
		s, err := h.jsonlStore(filepath.Dir(path)).Fork(ctx, path, engine.ForkOptions{At: entry, Branch: true})
		if err != nil {
			h.failPage(w, r, err)
			return
		}
		to := s.SessionFile()
		if err := s.Close(); err != nil {
			h.failPage(w, r, err)
			return
		}
		h.list.invalidate()
		h.list.wait(2 * time.Second)
		dest := h.sessionURL(to, layout.FormatJSONL)
		if dest == "" {
			dest = self
		}
		http.Redirect(w, r, dest+"?done=fork", http.StatusSeeOther)
		return
	case "branch":
		text = strings.TrimSpace(text)
		if entry == "" || text == "" {
			h.failPage(w, r, &refusedError{"branching here needs an entry and a summary of the branch left behind; nothing was written"})
			return
		}
		err = h.write(ctx, path, func(s *engine.Session) error {
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: entry, Summary: text})
			return err
		})
	case "label":
		if entry == "" {
			h.failPage(w, r, &refusedError{"a label needs an entry; nothing was written"})
			return
		}
		err = h.write(ctx, path, func(s *engine.Session) error {
			_, err := s.AppendLabelChange(entry, strings.TrimSpace(text))
			return err
		})
	case "rename":
		err = h.write(ctx, path, func(s *engine.Session) error {
			_, err := s.AppendSessionInfo(text)
			return err
		})
		if err == nil {
			h.list.invalidate()
		}
	default:
		h.failPage(w, r, fmt.Errorf("no act %q: %w", act, engine.ErrNotFound))
		return
	}
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	to := self + "?done=" + act
	if act == "label" {
		to = self + "?done=label&at=" + url.QueryEscape(entry) + "#e-" + url.QueryEscape(entry)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// write opens the session file at path for writing (its writer lock
// held), runs f and closes it. A session held by another writer is
// refused, naming the holder.
func (h *Handler) write(ctx context.Context, path string, f func(*engine.Session) error) error {
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	s, err := h.jsonlStore(filepath.Dir(path)).Open(wctx, path, engine.OpenOptions{LockMode: "write", Wait: true})
	if err != nil {
		return refusal(err)
	}
	err = f(s)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return refusal(err)
}

// refusal words an error of a write for a page: a held lock or a lock-less
// writer in the middle of a line names who; others are returned as they
// are.
func refusal(err error) error {
	var le *lock.LockedError
	var be *engine.BusyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		who := "another process"
		if le.Owner != nil {
			who = holderOf(le.Owner, le.Stale, le.Reason)
			who = strings.TrimPrefix(who, "written by ")
		}
		return &refusedError{fmt.Sprintf("refused: the session is being written by %s; nothing was written. Try again when it is done.", who)}
	case errors.As(err, &be):
		return &refusedError{fmt.Sprintf("refused: a process that takes no lock (pi) is writing the session's last line (%s); nothing was written. Try again in a moment.", lock.WritersText(be.Writers))}
	}
	return err
}
