package render

import (
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
)

// AgentUseTree writes AgentUse sessions as the tree of 'sessctl tree
// DIR': a line per session (id, agent, status; a damaged one shows its
// agent directory and "damaged"), its subagent sessions (Info.Children)
// drawn below it.
func AgentUseTree(w io.Writer, tops []*agentuse.Info) error {
	ew := &errWriter{w: w}
	var line func(x *agentuse.Info, indent string, last bool, top bool)
	line = func(x *agentuse.Info, indent string, last bool, top bool) {
		branch, next := "", ""
		if !top {
			branch, next = "├─ ", "│  "
			if last {
				branch, next = "└─ ", "   "
			}
		}
		agent, status := x.AgentName, x.Status
		if agent == "" {
			agent = x.AgentID
		}
		if x.Err != nil {
			agent, status = x.AgentDir, "damaged"
		}
		fmt.Fprintf(ew, "%s%ssession %s  %s  %s\n", indent, branch, human.QuotePath(x.ID), human.OneLineName(agent, 40), human.QuotePath(status))
		for i, c := range x.Children {
			line(c, indent+next, i == len(x.Children)-1, false)
		}
	}
	for _, x := range tops {
		line(x, "", true, true)
	}
	return ew.err
}

// AgentUseTreeJSON writes the sessions of tops and all their subagent
// sessions, each after its parent, as AgentUseListJSON does.
func AgentUseTreeJSON(w io.Writer, tops []*agentuse.Info) {
	var all []*agentuse.Info
	var walk func(x *agentuse.Info)
	walk = func(x *agentuse.Info) {
		all = append(all, x)
		for _, c := range x.Children {
			walk(c)
		}
	}
	for _, x := range tops {
		walk(x)
	}
	AgentUseListJSON(w, all)
}
