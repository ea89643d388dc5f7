package replica

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"filippo.io/age"

	"github.com/sessctl/sessctl/layout"
)

// SetPlaces points the options at the sessions of places: Places is
// set to them, AgentDir and AgentUseDir are cleared.
func (o *Options) SetPlaces(places []layout.Place) {
	o.Places = slices.Clone(places)
	o.AgentDir, o.AgentUseDir = "", ""
}

// jsonlRoots returns the directories whose session files replicate: the
// roots of the JSONL places, or AgentDir's sessions/ without places.
func (o *Options) jsonlRoots() []string {
	return o.roots(layout.FormatJSONL, o.AgentDir, layout.SessionsDir)
}

// projectRoots returns the directories of AgentUse project directories
// that replicate: the roots of the AgentUse places, or AgentUseDir's
// agentuse/project without places.
func (o *Options) projectRoots() []string {
	return o.roots(layout.FormatAgentUse, o.AgentUseDir, layout.AgentUseProjectsDir)
}

func (o *Options) roots(f layout.Format, dir string, below func(string) string) []string {
	if o.Places == nil {
		if dir == "" {
			return nil
		}
		return []string{below(dir)}
	}
	var out []string
	for _, p := range layout.Places(o.Places, f) {
		out = append(out, p.Root)
	}
	return out
}

// keeps reports whether the options keep sessions of id's kind
// somewhere: a JSONL root for KindPi, an AgentUse one for KindAgentUse.
func (o *Options) keeps(id string) bool {
	kind, _, _ := strings.Cut(id, "/")
	switch kind {
	case KindPi:
		return len(o.jsonlRoots()) > 0
	case KindAgentUse:
		return len(o.projectRoots()) > 0
	}
	return true
}

// firstRoot returns the first of roots, none when there is none (the
// reconcile never reaches a kind without roots: see keeps).
func firstRoot(roots []string, none string) string {
	if len(roots) == 0 {
		return none
	}
	return roots[0]
}

// LoadIdentity reads an age identity file (age-keygen's output): its
// identities decrypt, and their recipients encrypt, what the options
// replicate. Only X25519 identities are supported. It reads through o.FS.
func (o *Options) LoadIdentity(path string) error {
	f, err := o.fs().OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("read age identity %s: %w", path, err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil {
		return fmt.Errorf("read age identity %s: %w", path, err)
	}
	for _, id := range ids {
		x, ok := id.(*age.X25519Identity)
		if !ok {
			return fmt.Errorf("read age identity %s: only X25519 identities (age-keygen) are supported", path)
		}
		o.Recipients = append(o.Recipients, x.Recipient())
	}
	o.Identities = ids
	return nil
}

// States returns the values of SessionReport.State, in the order Tally
// counts them (a new slice each call).
func States() []string {
	return []string{"in sync", "pushed", "pulled", "pushed+pulled", "push", "pull", "push+pull", "new local", "new remote", "compare", "deleted", "failed"}
}

// StateCount is how many sessions of a Report are in one state.
type StateCount struct {
	State string
	N     int
}

// Tally counts the sessions of the report by state, in the order of
// States, leaving out states no session is in.
func (r *Report) Tally() []StateCount {
	counts := map[string]int{}
	for _, s := range r.Sessions {
		counts[s.State]++
	}
	var out []StateCount
	for _, st := range States() {
		if n := counts[st]; n > 0 {
			out = append(out, StateCount{st, n})
		}
	}
	return out
}

// ReportJSON is the JSON shape of a Report ('sessctl sync --json'):
// errors as strings, lists never null.
type ReportJSON struct {
	Sessions       []SessionJSON     `json:"sessions"`
	Requests       int64             `json:"requests"`
	RequestKinds   RequestCountsJSON `json:"requestKinds"`
	Uploaded       int64             `json:"uploaded"`
	Downloaded     int64             `json:"downloaded"`
	Warnings       []string          `json:"warnings"`
	Skipped        []string          `json:"skipped"`
	Collected      []string          `json:"collected"`
	CollectedBytes int64             `json:"collectedBytes"`
	// Replicators is filled by the caller (sessctl sync status) with
	// Remote.Replicators; it is never null.
	Replicators []ReplicatorStats `json:"replicators"`
}

// SessionJSON is the JSON shape of a SessionReport; Error is null when
// the session did not fail.
type SessionJSON struct {
	Kind      string         `json:"kind"`
	Name      string         `json:"name"`
	Path      string         `json:"path"`
	State     string         `json:"state"`
	Pushed    int            `json:"pushed"`
	Pulled    int            `json:"pulled"`
	Created   bool           `json:"created"`
	Conflicts []ConflictJSON `json:"conflicts"`
	Refused   []RefusedJSON  `json:"refused"`
	Error     *string        `json:"error"`
}

// ConflictJSON is the JSON shape of a Conflict.
type ConflictJSON struct {
	ID     string   `json:"id"`
	Copies []string `json:"copies"`
}

// RefusedJSON is the JSON shape of a RefusedLine.
type RefusedJSON struct {
	Object string `json:"object"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// JSON returns the report in its JSON shape.
func (r *Report) JSON() *ReportJSON {
	out := &ReportJSON{Sessions: []SessionJSON{}, Requests: r.Requests, RequestKinds: r.RequestKinds.JSON(), Uploaded: r.Uploaded, Downloaded: r.Downloaded,
		Warnings: []string{}, Skipped: []string{}, Collected: []string{}, CollectedBytes: r.CollectedBytes, Replicators: []ReplicatorStats{}}
	out.Collected = append(out.Collected, r.Collected...)
	for _, s := range r.Sessions {
		j := SessionJSON{Kind: s.Kind, Name: s.Name, Path: s.Path, State: s.State, Pushed: s.Pushed, Pulled: s.Pulled, Created: s.Created, Conflicts: []ConflictJSON{}, Refused: []RefusedJSON{}}
		for _, c := range s.Conflicts {
			j.Conflicts = append(j.Conflicts, ConflictJSON(c))
		}
		for _, l := range s.Refused {
			j.Refused = append(j.Refused, RefusedJSON(l))
		}
		if s.Err != nil {
			msg := s.Err.Error()
			j.Error = &msg
		}
		out.Sessions = append(out.Sessions, j)
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	for _, w := range r.Skipped {
		out.Skipped = append(out.Skipped, w.Error())
	}
	return out
}
