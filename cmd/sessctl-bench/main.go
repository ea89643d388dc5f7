package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/replica/s3"
	"github.com/sessctl/sessctl/tree"
)

const usage = `usage: sessctl-bench gen session [--seed N] [--entries N] [--v1] FILE
       sessctl-bench gen dir [--seed N] [--sessions N] [--size BYTES] DIR
       sessctl-bench resume FILE
       sessctl-bench append N DIR
       sessctl-bench append-sync N DIR
       sessctl-bench recent CWD
       sessctl-bench mkbucket BUCKET
       sessctl-bench put BUCKET/KEY FILE
       sessctl-bench get BUCKET/KEY`

// errUsage marks a command line that was not understood (exit 2).
var errUsage = errors.New(usage)

func main() {
	if err := run(context.Background(), os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sessctl-bench:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, args []string) error {
	if len(args) < 2 {
		return errUsage
	}
	switch args[0] {
	case "gen":
		return gen(out, args[1], args[2:])
	case "resume":
		if len(args) != 2 {
			return errUsage
		}
		n, err := resume(ctx, args[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%d entries\n", n)
		return err
	case "recent":
		if len(args) != 2 {
			return errUsage
		}
		file, d, err := recent(ctx, args[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s: %.3f ms\n", file, float64(d.Microseconds())/1000)
		return err
	case "mkbucket":
		if len(args) != 2 {
			return errUsage
		}
		return mkbucket(ctx, args[1])
	case "put", "get":
		if (args[0] == "put") != (len(args) == 3) || len(args) > 3 {
			return errUsage
		}
		bucket, key, ok := strings.Cut(args[1], "/")
		if !ok || bucket == "" || key == "" {
			return fmt.Errorf("%s: %q is not BUCKET/KEY: %w", args[0], args[1], errUsage)
		}
		file := ""
		if args[0] == "put" {
			file = args[2]
		}
		n, d, err := transfer(ctx, bucket, key, file)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s %d bytes in %.3f s: %.1f MB/s\n", args[0], n, d.Seconds(), float64(n)/1e6/d.Seconds())
		return err
	case "append", "append-sync":
		if len(args) != 3 {
			return errUsage
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 {
			return fmt.Errorf("%s: bad count %q: %w", args[0], args[1], errUsage)
		}
		policy := engine.SyncNone
		if args[0] == "append-sync" {
			policy = engine.SyncEach
		}
		d, err := appendMessages(ctx, args[2], n, policy)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%d entries in %dms: %d entries/s\n", n, d.Milliseconds(), int64(float64(n)/d.Seconds()))
		return err
	}
	return fmt.Errorf("unknown mode %q: %w", args[0], errUsage)
}

// gen writes a generated session ("session") or store ("dir").
func gen(out io.Writer, kind string, args []string) error {
	fs := flag.NewFlagSet("gen "+kind, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seed := fs.Uint64("seed", 1, "random seed")
	entries := fs.Int("entries", 100000, "entries in the session")
	v1 := fs.Bool("v1", false, "write a version 1 file (no ids)")
	sessions := fs.Int("sessions", 5000, "sessions in the store")
	size := fs.Int("size", 50000, "approximate bytes per session")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("gen %s: %v: %w", kind, err, errUsage)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("gen %s: expected one output path: %w", kind, errUsage)
	}
	path := filepath.Clean(fs.Arg(0))
	if err := sessionfile.CheckOutput(nil, path); err != nil {
		return err
	}
	switch kind {
	case "session":
		o := workload.Options{Seed: *seed, Entries: *entries}
		if *v1 {
			o.Version = 1
		}
		n, err := workload.WriteFile(path, o)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s: %d entries, %d bytes\n", path, *entries, n)
		return err
	case "dir":
		n, err := workload.Dir(path, *sessions, *size, *seed)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s: %d sessions, %d bytes\n", path, *sessions, n)
		return err
	}
	return fmt.Errorf("gen: unknown workload %q: %w", kind, errUsage)
}

// resume opens path for writing as an agent resuming it does, flushes the
// deferred migration and rewrite, and returns the number of entries.
func resume(ctx context.Context, path string) (int, error) {
	s, err := engine.OpenFile(ctx, path, engine.OpenOptions{})
	if err != nil {
		return 0, err
	}
	if err := s.Flush(); err != nil {
		s.Close()
		return 0, err
	}
	// Counted on the index: Entries returns deep copies (each entry's
	// bytes too, a second copy of the file), while pi's getEntries, which
	// pi-bench.mjs counts, returns its objects.
	var n int
	s.Index(func(ix *tree.Index) { n = ix.Len() })
	return n, s.Close()
}

// recent opens the most recent session of cwd in pi's store (the agent
// directory of $PI_CODING_AGENT_DIR or the default), read-only, and
// returns its file and the time Store.ContinueRecent took in process.
func recent(ctx context.Context, cwd string) (string, time.Duration, error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{})
	if err != nil {
		return "", 0, err
	}
	start := time.Now()
	s, err := st.ContinueRecent(ctx, cwd, engine.OpenOptions{ReadOnly: true})
	d := time.Since(start)
	if err != nil {
		return "", 0, err
	}
	file := s.SessionFile()
	return file, d, s.Close()
}

// mkbucket makes bucket on the S3 server the AWS_* variables name (as
// sessctl sync reads them), for make bench's sync rows.
func mkbucket(ctx context.Context, bucket string) error {
	mc, err := s3Client()
	if err != nil {
		return fmt.Errorf("mkbucket: %w", err)
	}
	return mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
}

// s3Client is a client of the S3 server the AWS_* variables name, as
// sessctl sync reads them.
func s3Client() (*minio.Client, error) {
	c := s3.EnvConfig(os.LookupEnv)
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("AWS_ENDPOINT_URL %q is not a URL", c.Endpoint)
	}
	return minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, ""), Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath})
}

// transfer copies file into the object bucket/key (put: file != "") or
// the object to nowhere (get), streamed in parts of 16 MiB like sync's
// segments: the object store's own speed, the floor under sync push and
// pull. It returns the bytes and the time.
func transfer(ctx context.Context, bucket, key, file string) (int64, time.Duration, error) {
	mc, err := s3Client()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if file == "" {
		obj, err := mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return 0, 0, err
		}
		defer obj.Close()
		n, err := io.Copy(io.Discard, obj)
		return n, time.Since(start), err
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	info, err := mc.PutObject(ctx, bucket, key, f, st.Size(), minio.PutObjectOptions{PartSize: 16 << 20, DisableContentSha256: true})
	return info.Size, time.Since(start), err
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

// appendMessages creates a session in dir and appends n typed messages,
// assistant and user in turn, under policy; it returns the loop's time.
func appendMessages(ctx context.Context, dir string, n int, policy engine.SyncPolicy) (time.Duration, error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir, Sync: policy})
	if err != nil {
		return 0, err
	}
	s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		return 0, err
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
			return 0, err
		}
	}
	d := time.Since(start)
	return d, s.Close()
}
