package replica

import (
	"slices"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// Info is the listing row of a remote JSONL session, as
// engine.Store.List gives a local one's, from its Summary: its path is
// its Name, a session with no message says "(no messages)", and it was
// modified at its last message (else when it was created, else when the
// manifest was published).
func (s RemoteSession) Info() engine.Info {
	sum := s.Summary
	in := engine.Info{Path: s.Name, ID: sum.ID, Cwd: sum.Cwd, MessageCount: sum.Messages, FirstMessage: sum.FirstMessage,
		Size: s.Size, ModTime: s.Time}
	if sum.Name != "" {
		in.Name, in.HasName = sum.Name, true
	}
	if sum.FirstMessage == "" {
		in.FirstMessage = "(no messages)"
	}
	if t, err := time.Parse(time.RFC3339Nano, sum.Created); err == nil {
		in.Created, in.CreatedValid = t, true
	}
	switch {
	case sum.LastMessage != "":
		if t, err := time.Parse(time.RFC3339Nano, sum.LastMessage); err == nil {
			in.Modified = t
			break
		}
		fallthrough
	case in.CreatedValid:
		in.Modified = in.Created
	default:
		in.Modified = s.Time
	}
	return in
}

// PiInfos returns the listing rows (Info) of the pi sessions of ss,
// newest first, as 'sessctl list --remote' shows them, and apart the
// sessions of any kind that could not be read (Err set).
func PiInfos(ss []RemoteSession) (infos []engine.Info, failed []RemoteSession) {
	for _, s := range ss {
		switch {
		case s.Err != nil:
			failed = append(failed, s)
		case s.Kind == KindPi:
			infos = append(infos, s.Info())
		}
	}
	slices.SortStableFunc(infos, func(a, b engine.Info) int { return b.Modified.Compare(a.Modified) })
	return infos, failed
}
