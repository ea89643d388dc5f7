package sqlitedb

import (
	"strings"
	"testing"
	"time"
)

type row struct {
	id, parent string
	at         int
}

// TestParentsFirst: sessions come by creation, each after its parent even
// when the parent was created later; a cycle is cut, nobody is lost.
func TestParentsFirst(t *testing.T) {
	t.Parallel()
	list := []row{{"c", "b", 1}, {"b", "", 3}, {"a", "", 2}, {"x", "y", 4}, {"y", "x", 5}, {"z", "gone", 0}}
	got := ParentsFirst(list,
		func(r row) string { return r.id }, func(r row) string { return r.parent },
		func(r row) time.Time { return time.Unix(int64(r.at), 0) })
	var ids []string
	for _, r := range got {
		ids = append(ids, r.id)
	}
	if s := strings.Join(ids, " "); s != "z b c a y x" {
		t.Fatalf("order %q, want %q", s, "z b c a y x")
	}
}
