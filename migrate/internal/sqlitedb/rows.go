package sqlitedb

import (
	"database/sql"
	"sort"
	"time"
)

// ScanRow scans the current row of rows into a map by column name, so
// that an importer reads the columns a database has, whichever schema
// version wrote it.
func ScanRow(rows *sql.Rows, cols []string) (map[string]any, error) {
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		m[c] = vals[i]
	}
	return m, nil
}

// ParentsFirst orders the sessions read from a database by creation (id
// breaking ties), each after its parent where the parent is among them,
// so that a child's import can name its parent's file. A cycle of
// parents is cut; every session is returned once.
func ParentsFirst[S any](list []S, id, parent func(S) string, created func(S) time.Time) []S {
	sort.SliceStable(list, func(i, j int) bool {
		if ci, cj := created(list[i]), created(list[j]); !ci.Equal(cj) {
			return ci.Before(cj)
		}
		return id(list[i]) < id(list[j])
	})
	byID := make(map[string]S, len(list))
	for _, s := range list {
		byID[id(s)] = s
	}
	done := map[string]bool{}
	out := make([]S, 0, len(list))
	var visit func(s S, depth int)
	visit = func(s S, depth int) {
		if done[id(s)] {
			return
		}
		done[id(s)] = true
		if p, ok := byID[parent(s)]; ok && depth < len(list) {
			visit(p, depth+1)
		}
		out = append(out, s)
	}
	for _, s := range list {
		visit(s, 0)
	}
	return out
}
