package importer_test

import (
	"context"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/migrate/sources"
)

func importClaude(ctx context.Context, agentDir, path string) error {
	src, _ := sources.ByName("claude")
	im := importer.New(importer.Options{AgentDir: agentDir})
	var failed error
	im.Store(ctx, src, path, importer.Handler{
		Session: func(r importer.Result) {
			if r.Status == importer.StatusFailed {
				failed = r.Err
			}
		},
		Fail: func(err error) { failed = err },
	})
	return failed
}

// importClaude is compiled, not called.
var _ = importClaude
