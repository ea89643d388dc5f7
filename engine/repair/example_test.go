package repair_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/repair"
)

func salvage(ctx context.Context, path string) (*engine.Session, error) {
	s, err := engine.OpenFile(ctx, path, engine.OpenOptions{})
	if !errors.Is(err, engine.ErrCorrupt) {
		return s, err
	}
	res, err := repair.File(path, repair.Options{}) // the original is kept
	if err != nil {
		return nil, err
	}
	if res.Output == nil {
		return nil, fmt.Errorf("open %s: nothing to repair", path)
	}
	return engine.OpenFile(ctx, *res.Output, engine.OpenOptions{})
}
