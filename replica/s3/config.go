package s3

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/replica"
)

// Scheme is the URL scheme of the remotes this package opens
// (s3://bucket/prefix): the key of its Backend in
// replica.Options.Backends.
const Scheme = "s3"

// Config says how to reach the object store. EnvConfig fills it from the
// AWS_* variables every S3 tool reads.
type Config struct {
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

// EnvConfig reads the configuration from the environment through lookup
// (os.LookupEnv in a program): AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3,
// which takes precedence), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION or AWS_DEFAULT_REGION. Nothing else is
// read: there is no credentials file of sessctl's own.
func EnvConfig(lookup func(string) (string, bool)) Config {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	c := Config{
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

// ParseURL splits s3://bucket/prefix into the bucket and the key prefix,
// which is "" or ends with "/". Anything else is replica.ErrBadRemote.
func ParseURL(remote string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(remote, Scheme+"://")
	if !ok {
		return "", "", fmt.Errorf("parse remote %q: %w", remote, replica.ErrBadRemote)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" || strings.ContainsAny(bucket, " \\") {
		return "", "", fmt.Errorf("parse remote %q: no bucket: %w", remote, replica.ErrBadRemote)
	}
	prefix = strings.Trim(prefix, "/")
	for _, p := range strings.Split(prefix, "/") {
		if p == "." || p == ".." {
			return "", "", fmt.Errorf("parse remote %q: %w", remote, replica.ErrBadRemote)
		}
	}
	if prefix != "" {
		prefix += "/"
	}
	return bucket, prefix, nil
}

// Backend returns the replica.Backend that opens s3://bucket/prefix
// remotes reached as c says, for replica.Options.Backends under Scheme:
//
//	replica.Options{Remote: "s3://team/sessions",
//		Backends: map[string]replica.Backend{s3.Scheme: s3.Backend(s3.EnvConfig(os.LookupEnv))}}
func Backend(c Config) replica.Backend {
	return func(remote string) (replica.Client, error) {
		bucket, prefix, err := ParseURL(remote)
		if err != nil {
			return nil, err
		}
		return NewClient(c, bucket, prefix)
	}
}

// ErrNoCredentials is returned when no access key is configured.
var ErrNoCredentials = errors.New("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
