//go:build ignore

// benchdriver: the sessctl side of scripts/bench.sh's like-for-like rows,
// the counterpart of scripts/pi-bench.mjs. Built by bench.sh with
// `go build -o DRIVER scripts/benchdriver/main.go` (it is no package of
// the module).
//
// Usage:
//
//	benchdriver resume FILE         engine.OpenFile(FILE) for writing (default
//	                                options: lock, backup of a migrated
//	                                file), Flush (the deferred migration
//	                                and rewrite), Close; prints the entries
//	benchdriver append N DIR        create a session in DIR and append N
//	                                typed messages (message.NewAssistant,
//	                                message.NewUser: the messages of
//	                                pi-bench.mjs) under SyncNone (one write
//	                                per append, no fsync); prints entries/s
//	                                of the loop
//	benchdriver append-sync N DIR   the same under SyncEach (an fsync per
//	                                append)
//	benchdriver mkbucket BUCKET     make the bucket on the S3 server the
//	                                AWS_* variables name (sync's RSS rows)
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/tree"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchdriver:", err)
		os.Exit(1)
	}
}

// editArgs are the tool call's arguments, in pi-bench.mjs's key order.
type editArgs struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// messages returns the assistant and user messages pi-bench.mjs appends.
func messages() (*message.Assistant, *message.User) {
	user := message.NewUser("Run the tests again and tell me which package fails, and why; then propose the smallest fix that keeps the public API as it is.", time.UnixMilli(1772355600000))
	assistant := message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{
		message.NewThinking("The failing package is layout: codec.go uses utf16 without importing it. The smallest fix adds the import."),
		message.NewText("layout fails to build: codec.go calls utf16.Encode but does not import unicode/utf16. Adding the import fixes it; nothing else changes."),
		message.NewToolCall("toolu_01", "edit", editArgs{Path: "layout/codec.go", OldText: "import (", NewText: "import (\n\t\"unicode/utf16\""}),
	}, message.NewUsage(12040, 180, 8000, 0, message.Cost{Input: 0.03612, Output: 0.0027, CacheRead: 0.0024, CacheWrite: 0, Total: 0.04122}),
		message.StopToolUse, time.UnixMilli(1772355601000))
	return assistant, user
}

func run(args []string) error {
	ctx := context.Background()
	if len(args) < 2 {
		return fmt.Errorf("usage: benchdriver resume FILE | append N DIR | append-sync N DIR")
	}
	switch args[0] {
	case "resume":
		s, err := engine.OpenFile(ctx, args[1], engine.OpenOptions{})
		if err != nil {
			return err
		}
		if err := s.Flush(); err != nil {
			s.Close()
			return err
		}
		// Counted on the index: Entries returns deep copies (each
		// entry's bytes too, a second copy of the file), while pi's
		// getEntries, which pi-bench.mjs counts, returns its objects.
		var n int
		s.Index(func(ix *tree.Index) { n = ix.Len() })
		if err := s.Close(); err != nil {
			return err
		}
		fmt.Printf("%d entries\n", n)
	case "append", "append-sync":
		if len(args) != 3 {
			return fmt.Errorf("usage: benchdriver %s N DIR", args[0])
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		sync := engine.SyncNone
		if args[0] == "append-sync" {
			sync = engine.SyncEach
		}
		st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: args[2], Sync: sync})
		if err != nil {
			return err
		}
		s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{})
		if err != nil {
			return err
		}
		assistant, user := messages()
		start := time.Now()
		for i := range n {
			var m message.Message = user
			if i%2 == 0 {
				m = assistant
			}
			if _, err := s.AppendMessage(m); err != nil {
				s.Close()
				return err
			}
		}
		d := time.Since(start)
		if err := s.Close(); err != nil {
			return err
		}
		fmt.Printf("%d entries in %dms: %d entries/s\n", n, d.Milliseconds(), int64(float64(n)/d.Seconds()))
	case "mkbucket":
		c := replica.EnvS3Config(os.LookupEnv)
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" {
			return fmt.Errorf("mkbucket: AWS_ENDPOINT_URL %q is not a URL", c.Endpoint)
		}
		mc, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, ""), Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath})
		if err != nil {
			return err
		}
		return mc.MakeBucket(ctx, args[1], minio.MakeBucketOptions{})
	default:
		return fmt.Errorf("unknown mode %q", args[0])
	}
	return nil
}
