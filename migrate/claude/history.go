package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// This file imports, when ImportOptions.History asks for it, the prompts
// history.jsonl keeps of sessions whose transcripts are gone. Claude Code
// appends one line per prompt to ~/.claude/history.jsonl: {display,
// pastedContents, timestamp (epoch ms), project (the working directory),
// sessionId (from 2.0)}; display is what the user typed, with each paste
// shown as "[Pasted text #N +M lines]" and its text in pastedContents.N.

// historyLine is one line of history.jsonl.
type historyLine struct {
	Display        string                     `json:"display"`
	PastedContents map[string]json.RawMessage `json:"pastedContents"`
	Timestamp      json.RawMessage            `json:"timestamp"`
	Project        string                     `json:"project"`
	SessionID      string                     `json:"sessionId"`
}

// pasted is one entry of pastedContents.
type pasted struct {
	Type      string `json:"type"`
	Content   string `json:"content"`
	MediaType string `json:"mediaType"`
}

// historySession is the prompts of one session in history.jsonl.
type historySession struct {
	id      string
	project string
	prompts []historyPrompt
}

type historyPrompt struct {
	line int
	h    historyLine
	t    time.Time
}

// historyNoSession is the key of the ref that reports the prompts that
// name no session.
const historyNoSession = "history-nosession"

// readHistory reads history.jsonl once: the sessions it names whose
// transcripts are not in the store, oldest first, the number of prompts
// that name no session, and the damaged lines. Only sessions of the
// project directories being imported count, unless the whole store is.
func (s *store) readHistory() (sessions []*historySession, noSession int, damage []error) {
	if s.l.history == "" || s.l.file != "" {
		return nil, 0, nil
	}
	fh, err := srcfs.Open(s.opts.FS, s.l.history)
	if err != nil {
		return nil, 0, []error{&migrate.Damage{Path: s.l.history, Err: err}}
	}
	defer fh.Close()
	byID := map[string]*historySession{}
	err = migrate.EachLine(fh, s.opts.MaxLine, func(n int, line []byte, err error) bool {
		var h historyLine
		if err == nil {
			err = migrate.DecodeLine(line, &h)
		}
		if err != nil {
			damage = append(damage, &migrate.Damage{Path: s.l.history, Line: n, Err: err})
			return true
		}
		if h.SessionID == "" {
			noSession++
			return true
		}
		hs := byID[h.SessionID]
		if hs == nil {
			hs = &historySession{id: h.SessionID, project: h.Project}
			byID[h.SessionID] = hs
			sessions = append(sessions, hs)
		}
		t, _ := migrate.ParseTime(h.Timestamp)
		hs.prompts = append(hs.prompts, historyPrompt{line: n, h: h, t: t})
		return true
	})
	if err != nil {
		damage = append(damage, &migrate.Damage{Path: s.l.history, Err: err})
	}
	// Which transcripts exist, and which projects are being imported.
	have := map[string]bool{}
	projects := map[string]bool{}
	for _, dir := range s.l.projectDirs {
		projects[filepath.Base(dir)] = true
		ents, _ := srcfs.ReadDir(s.opts.FS, dir)
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && !e.IsDir() {
				have[name] = true
			}
		}
	}
	kept := sessions[:0]
	for _, hs := range sessions {
		if have[hs.id] || !s.l.allProjects && !projects[EncodeCwd(hs.project)] {
			continue
		}
		kept = append(kept, hs)
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].prompts[0].t.Before(kept[j].prompts[0].t) })
	return kept, noSession, damage
}

// historyRefs lists the prompt-only sessions of history.jsonl, and a
// last ref reporting the prompts that name no session, if any.
func (s *store) historyRefs() ([]migrate.Ref, []error) {
	sessions, noSession, damage := s.readHistory()
	s.mu.Lock()
	s.histSessions = map[string]*historySession{}
	s.histNoSession = noSession
	s.mu.Unlock()
	var refs []migrate.Ref
	for _, hs := range sessions {
		s.mu.Lock()
		s.histSessions[hs.id] = hs
		s.mu.Unlock()
		refs = append(refs, migrate.Ref{ID: hs.id, Path: s.l.history, Key: "history\x00" + hs.id})
	}
	if noSession > 0 {
		refs = append(refs, migrate.Ref{ID: "history.jsonl", Path: s.l.history, Key: historyNoSession})
	}
	return refs, damage
}

// placeholderRe matches the placeholders display shows for pasted text
// and images.
var placeholderRe = regexp.MustCompile(`\[(Pasted text|Image) #(\d+)(?: \+\d+ lines)?\]`)

// convertHistory makes the prompt-only session of a history ref: the
// prompts as user messages, slash commands as custom_message entries
// "claude-command" (as the transcript importer maps them), in the
// session's working directory, started at its first prompt, and marked
// prompt-only in the provenance entry.
func (s *store) convertHistory(_ context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	conv := &migrate.Conversion{}
	if ref.Key == historyNoSession {
		s.mu.Lock()
		n := s.histNoSession
		s.mu.Unlock()
		what := fmt.Sprintf("%d prompts name", n)
		if n == 1 {
			what = "1 prompt names"
		}
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: ref.ID, Path: ref.Path,
			Reason: what + " no session (written before Claude Code recorded sessionId)"})
		return conv, nil
	}
	_, id, _ := strings.Cut(ref.Key, "\x00")
	s.mu.Lock()
	hs := s.histSessions[id]
	s.mu.Unlock()
	if hs == nil {
		return nil, fmt.Errorf("claude: unknown history session %q", id)
	}
	b := migrate.NewBuilder("claude", hs.id)
	var tip *migrate.Node
	m := migrate.Meta{SourcePath: s.l.history, PromptOnly: true}
	clock := time.UnixMilli(0).UTC()
	for _, p := range hs.prompts {
		if !p.t.IsZero() {
			clock = p.t
		}
		if m.Start.IsZero() && !p.t.IsZero() {
			m.Start = p.t
		}
		key := "h" + strconv.Itoa(p.line)
		if strings.HasPrefix(p.h.Display, "/") {
			tip = b.CustomMessage(key, tip, clock, "claude-command", jsonl.AppendString(nil, p.h.Display), true, nil)
			continue
		}
		tip = b.Message(key, tip, clock, migrate.UserMessage(historyContent(&p.h), migrate.Millis(clock)))
	}
	if b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: hs.id, Path: s.l.history, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if m.Start.IsZero() {
		m.Start = clock
	}
	if hs.project != "" {
		m.Cwd, m.CwdKnown = hs.project, true
	} else {
		m.Cwd = s.opts.Cwd
	}
	conv.Sessions = append(conv.Sessions, b.Finish(m))
	return conv, nil
}

// historyContent returns a prompt as user content: display with each
// pasted text in place of its placeholder, and pasted images after the
// text. A placeholder whose paste history.jsonl does not hold (newer
// Claude Code keeps large pastes elsewhere) stays as it is.
func historyContent(h *historyLine) []byte {
	var images [][]byte
	text := placeholderRe.ReplaceAllStringFunc(h.Display, func(ph string) string {
		sm := placeholderRe.FindStringSubmatch(ph)
		raw, ok := h.PastedContents[sm[2]]
		if !ok {
			return ph
		}
		var p pasted
		if json.Unmarshal(raw, &p) != nil || p.Content == "" {
			return ph
		}
		switch {
		case sm[1] == "Pasted text" && (p.Type == "" || p.Type == "text"):
			return p.Content
		case sm[1] == "Image" && p.Type == "image" && p.MediaType != "":
			images = append(images, migrate.ImageBlock(p.Content, p.MediaType))
		}
		return ph
	})
	return migrate.Array(append([][]byte{migrate.TextBlock(text)}, images...))
}
