package adk

import (
	"iter"
	"maps"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"
)

// localSession is the session.Session the Service returns: a snapshot of
// the session's state and events when it was read, that AppendEvent keeps
// current as ADK's runner expects.
type localSession struct {
	app, user, id string

	mu      sync.RWMutex
	state   map[string]any
	events  []*session.Event
	updated time.Time
	// load reads the state of a session that was listed (List reads no
	// session file); nil once it has run.
	load    func() (map[string]any, error)
	loadErr error
}

var _ session.Session = (*localSession)(nil)

func (s *localSession) ID() string      { return s.id }
func (s *localSession) AppName() string { return s.app }
func (s *localSession) UserID() string  { return s.user }

func (s *localSession) State() session.State { return (*localState)(s) }

func (s *localSession) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events(s.events)
}

func (s *localSession) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// loaded reads a listed session's state at its first use; s.mu is held.
func (s *localSession) loaded() error {
	if s.load != nil {
		st, err := s.load()
		s.load = nil
		if err != nil {
			s.loadErr = err
			st = map[string]any{}
		}
		s.state = st
	}
	return s.loadErr
}

// appended records an event AppendEvent wrote: its whole state delta
// (temp: keys too, which the invocation still reads) goes into the state,
// the event without its temp: keys into the events.
func (s *localSession) appended(ev, stored *session.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.loaded()
	if s.state == nil {
		s.state = map[string]any{}
	}
	maps.Copy(s.state, ev.Actions.StateDelta)
	s.events = append(s.events, stored)
	s.updated = ev.Timestamp
}

// localState is a localSession's session.State.
type localState localSession

func (st *localState) Get(key string) (any, error) {
	s := (*localSession)(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loaded(); err != nil {
		return nil, err
	}
	v, ok := s.state[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (st *localState) Set(key string, value any) error {
	s := (*localSession)(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loaded(); err != nil {
		return err
	}
	if s.state == nil {
		s.state = map[string]any{}
	}
	s.state[key] = value
	return nil
}

func (st *localState) All() iter.Seq2[string, any] {
	s := (*localSession)(st)
	s.mu.Lock()
	_ = s.loaded()
	c := maps.Clone(s.state)
	s.mu.Unlock()
	return func(yield func(string, any) bool) {
		for k, v := range c {
			if !yield(k, v) {
				return
			}
		}
	}
}

// events is a session's session.Events.
type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e events) Len() int { return len(e) }

func (e events) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}
