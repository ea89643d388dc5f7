package replica

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// S3Config says how to reach the object store. EnvS3Config fills it from
// the AWS_* variables every S3 tool reads.
type S3Config struct {
	// Endpoint is the URL of a non-AWS endpoint (MinIO, R2, GCS's S3
	// API), from AWS_ENDPOINT_URL; "" means AWS S3 of Region. Buckets on
	// such an endpoint are addressed by path (endpoint/bucket/key), which
	// every S3-compatible server accepts; AWS uses its own default.
	Endpoint string
	// AccessKeyID, SecretAccessKey and SessionToken are the credentials
	// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
	AccessKeyID, SecretAccessKey, SessionToken string
	// Region is AWS_REGION (else AWS_DEFAULT_REGION); "" means us-east-1.
	Region string
	// RequestTimeout bounds each request's wait for a response header
	// (a stalled connection); 0 means 30 seconds.
	RequestTimeout time.Duration
	// MaxRetries is how often a failed request is retried (with backoff)
	// before the call fails; 0 means 3.
	MaxRetries int
}

// EnvS3Config reads the configuration from the environment through
// lookup (os.LookupEnv in a program): AWS_ENDPOINT_URL (or
// AWS_ENDPOINT_URL_S3, which takes precedence), AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
// AWS_DEFAULT_REGION. Nothing else is read: there is no credentials file
// of sessctl's own.
func EnvS3Config(lookup func(string) (string, bool)) S3Config {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	c := S3Config{
		Endpoint:        get("AWS_ENDPOINT_URL"),
		AccessKeyID:     get("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: get("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    get("AWS_SESSION_TOKEN"),
		Region:          get("AWS_REGION"),
	}
	if e := get("AWS_ENDPOINT_URL_S3"); e != "" {
		c.Endpoint = e
	}
	if c.Region == "" {
		c.Region = get("AWS_DEFAULT_REGION")
	}
	return c
}

// ParseRemote splits s3://bucket/prefix into the bucket and the key
// prefix, which is "" or ends with "/".
func ParseRemote(remote string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(remote, "s3://")
	if !ok {
		return "", "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" || strings.ContainsAny(bucket, " \\") {
		return "", "", fmt.Errorf("parse remote %q: no bucket: %w", remote, ErrBadRemote)
	}
	prefix = strings.Trim(prefix, "/")
	for _, p := range strings.Split(prefix, "/") {
		if p == "." || p == ".." {
			return "", "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
		}
	}
	if prefix != "" {
		prefix += "/"
	}
	return bucket, prefix, nil
}

// ErrBadRemote is returned for a remote that is neither
// s3://bucket[/prefix] nor a directory.
var ErrBadRemote = errors.New("the remote must be s3://bucket/prefix, or a directory: file:///path, /path or ./path")

// ErrNoCredentials is returned when no access key is configured.
var ErrNoCredentials = errors.New("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")

// newClient makes the Client of a remote: s3://bucket/prefix, or a
// directory.
func newClient(remote string, c S3Config, fsys vfs.FS) (Client, error) {
	if strings.HasPrefix(remote, "s3://") {
		bucket, prefix, err := ParseRemote(remote)
		if err != nil {
			return nil, err
		}
		return NewS3Client(c, bucket, prefix)
	}
	dir, err := remoteDir(remote)
	if err != nil {
		return nil, err
	}
	return NewDirClient(dir, fsys)
}

// remoteDir returns the directory a remote names: a file:// URL (of this
// host), an absolute path, or a path relative to the working directory
// that says so (./dir, ../dir). A bare relative name ("bucket/prefix")
// is refused: it is more likely an S3 remote without its scheme.
func remoteDir(remote string) (string, error) {
	if strings.HasPrefix(remote, "file:") {
		u, err := url.Parse(remote)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			return "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
		}
		p := u.Path
		if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
			p = p[1:] // file:///C:/dir
		}
		return filepath.FromSlash(p), nil
	}
	rel := remote == "." || remote == ".."
	for _, s := range []string{"./", "../", "." + string(filepath.Separator), ".." + string(filepath.Separator)} {
		rel = rel || strings.HasPrefix(remote, s)
	}
	if filepath.IsAbs(remote) || rel {
		return remote, nil
	}
	return "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
}
