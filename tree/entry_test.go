package tree_test

import (
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// tree's kinds are the codec's: the same type, the same values.
func TestKindsAreTheCodecs(t *testing.T) {
	for _, k := range []struct{ tree, codec tree.Kind }{
		{tree.KindAbsent, jsonl.KindAbsent}, {tree.KindNull, jsonl.KindNull}, {tree.KindBool, jsonl.KindBool},
		{tree.KindNumber, jsonl.KindNumber}, {tree.KindString, jsonl.KindString}, {tree.KindArray, jsonl.KindArray},
		{tree.KindObject, jsonl.KindObject},
	} {
		if k.tree != k.codec {
			t.Errorf("tree's kind %d is the codec's %d", k.tree, k.codec)
		}
	}
	for raw, want := range map[string]tree.Kind{``: tree.KindAbsent, `null`: tree.KindNull, `true`: tree.KindBool, `1`: tree.KindNumber, `"a"`: tree.KindString, `[]`: tree.KindArray, `{}`: tree.KindObject} {
		if got := jsonl.KindOf([]byte(raw)); got != want {
			t.Errorf("KindOf(%s) = %d, want tree's %d", raw, got, want)
		}
	}
}
