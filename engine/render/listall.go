package render

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/migrate"
)

// ListAll writes infos, sessions of every cwd, as the table of 'sessctl
// list --all': ListIn's columns, the sessions grouped under a line
// "cwd: DIR" naming their working directory (the group of the newest
// session first), and a session forked from, or a child of, a listed
// session (its header's parentSession) right below its parent, marked
// with "↳" after its time. Ids are shortened among store's and infos'.
// It writes nothing for no infos.
func ListAll(w io.Writer, infos, store []engine.Info) error {
	if len(infos) == 0 {
		return nil
	}
	var ids shortid.Set
	for _, in := range [][]engine.Info{store, infos} {
		for i := range in {
			ids.Add(in[i].Path, in[i].ID)
		}
	}
	order, child := treeOrder(infos)
	width := shortid.MinLen
	short := make([]string, len(infos))
	for i := range infos {
		short[i] = human.QuotePath(ids.Short(infos[i].ID))
		width = max(width, len(short[i]))
	}
	// Groups by the cwd of their top session, in the order they start.
	var cwds []string
	groups := map[string][]int{}
	cwd := ""
	for _, i := range order {
		if !child[i] {
			cwd = infos[i].Cwd
		}
		if _, ok := groups[cwd]; !ok {
			cwds = append(cwds, cwd)
		}
		groups[cwd] = append(groups[cwd], i)
	}
	ew := &errWriter{w: w}
	w = ew
	fmt.Fprintf(w, "%-16s  %5s  %-*s  %s\n", "MODIFIED", "MSGS", width, "ID", "NAME / FIRST MESSAGE")
	fileDates, children := false, false
	for _, c := range cwds {
		name := human.QuotePath(c)
		if c == "" {
			name = "(none)"
		}
		fmt.Fprintf(w, "cwd: %s\n", name)
		for _, i := range groups[c] {
			in := &infos[i]
			title := human.OneLineText(in.FirstMessage, 60)
			if in.HasName && in.Name != "" {
				title = human.OneLineName(in.Name, 60)
			}
			mark := " "
			switch {
			case migrate.ImportedDateFromFile(in.Path, in.ID):
				mark, fileDates = "*", true
			case child[i]:
				mark, children = "↳", true
			}
			fmt.Fprintf(w, "%-16s%s %5d  %-*s  %s\n", in.Modified.Local().Format("2006-01-02 15:04"), mark,
				in.MessageCount, width, short[i], title)
		}
	}
	if fileDates {
		fmt.Fprintf(w, "* %s\n", FileDateNote)
	}
	if children {
		fmt.Fprintf(w, "↳ forked from, or a child of, the session above it\n")
	}
	return ew.err
}

// treeOrder returns the indexes of infos with each session whose header's
// parentSession names a listed session right after that session (its
// children in infos' order), and which of them are such children. A
// parent loop is broken where it closes.
func treeOrder(infos []engine.Info) (order []int, child []bool) {
	byPath := make(map[string]int, len(infos))
	for i := range infos {
		byPath[filepath.Clean(infos[i].Path)] = i
	}
	parent := make([]int, len(infos))
	kids := make([][]int, len(infos))
	child = make([]bool, len(infos))
	for i := range infos {
		parent[i] = -1
		if p := infos[i].ParentSessionPath; p != "" {
			if j, ok := byPath[filepath.Clean(p)]; ok && j != i {
				parent[i] = j
			}
		}
	}
	// A session on a parent loop is a top session where the loop is
	// first met.
	for i := range infos {
		seen := map[int]bool{i: true}
		for j := parent[i]; j >= 0; j = parent[j] {
			if seen[j] {
				parent[i] = -1
				break
			}
			seen[j] = true
		}
	}
	for i := range infos {
		if parent[i] >= 0 {
			kids[parent[i]] = append(kids[parent[i]], i)
			child[i] = true
		}
	}
	done := make([]bool, len(infos))
	var add func(i int)
	add = func(i int) {
		if done[i] {
			return
		}
		done[i] = true
		order = append(order, i)
		for _, k := range kids[i] {
			add(k)
		}
	}
	for i := range infos {
		if parent[i] < 0 {
			add(i)
		}
	}
	for i := range infos { // what a loop left out
		if !done[i] {
			child[i] = false
			add(i)
		}
	}
	return order, child
}
