package render

import (
	"fmt"
	"io"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// AgentUseList writes AgentUse sessions (agentuse.Store.List) as the
// table of 'sessctl list --agentuse': created (local time), status, short
// id, agent and model, subagents indented under their parents; a damaged
// session shows as "damaged" with its agent directory.
func AgentUseList(w io.Writer, list []*agentuse.Info) {
	fmt.Fprintf(w, "%-16s  %-9s  %-12s  %-24s  %s\n", "CREATED", "STATUS", "ID", "AGENT", "MODEL")
	for _, x := range list {
		created, status, agent := "unknown", x.Status, x.AgentName
		if x.Err == nil && x.Created > 0 {
			created = time.UnixMilli(x.Created).Local().Format("2006-01-02 15:04")
		}
		if x.Err != nil {
			status, agent = "damaged", x.AgentDir
		} else if status == "" {
			status = "unknown"
		}
		if agent == "" {
			agent = x.AgentID
		}
		if x.Nested {
			agent = "  " + human.OneLineName(agent, 22)
		} else {
			agent = human.OneLineName(agent, 24)
		}
		fmt.Fprintf(w, "%-16s  %-9s  %-12s  %-24s  %s\n", created, status, human.QuotePath(shortULID(x.ID)), agent, human.QuotePath(x.Model))
	}
}

// AgentUseListJSON writes AgentUse sessions as the JSON array of
// 'sessctl list --agentuse --json', one session a line.
func AgentUseListJSON(w io.Writer, list []*agentuse.Info) {
	io.WriteString(w, "[")
	for i, x := range list {
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "\n  ")
		w.Write(agentUseInfoJSON(x))
	}
	if len(list) > 0 {
		io.WriteString(w, "\n")
	}
	io.WriteString(w, "]\n")
}

// agentUseInfoJSON is one session of AgentUseListJSON.
func agentUseInfoJSON(x *agentuse.Info) []byte {
	b := jsonl.NewObject(512).String("id", x.ID).String("dir", x.Dir).String("agentDir", x.AgentDir)
	if x.Err != nil {
		return b.String("error", x.Err.Error()).Bytes()
	}
	b.String("agentId", x.AgentID).String("agentName", x.AgentName).Bool("isSubAgent", x.IsSubAgent).
		String("model", x.Model).String("status", x.Status).String("trigger", x.Trigger).
		Number("created", float64(x.Created)).Number("updated", float64(x.Updated))
	if x.ParentID != "" {
		b.String("parentSessionID", x.ParentID)
	} else {
		b.Null("parentSessionID")
	}
	if x.ErrorCode != "" {
		b.String("errorCode", x.ErrorCode)
	} else {
		b.Null("errorCode")
	}
	return b.Raw("children", AgentUseIDs(x.Children)).Bytes()
}
