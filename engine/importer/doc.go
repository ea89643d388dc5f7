// Package importer imports other agents' sessions into a pi store: it
// opens a store with one of package migrate's Sources (migrate/sources
// lists them), converts each session, and writes it where pi keeps the
// sessions of its working directory, under the session's writer lock.
// Re-importing replaces the earlier import of a session, but never a file
// that changed since it was imported. It is what 'sessctl import' runs:
//
//	func importClaude(ctx context.Context, agentDir, path string) error {
//		src, _ := sources.ByName("claude")
//		im := importer.New(importer.Options{AgentDir: agentDir})
//		var failed error
//		im.Store(ctx, src, path, importer.Handler{
//			Session: func(r importer.Result) {
//				if r.Status == importer.StatusFailed {
//					failed = r.Err
//				}
//			},
//			Fail: func(err error) { failed = err },
//		})
//		return failed
//	}
package importer
