package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/replica"
)

// s3Client is the Client of an S3-compatible bucket: keys below prefix.
type s3Client struct {
	c              *minio.Client
	bucket, prefix string
}

// NewClient returns the replica.Client of the objects below prefix (""
// or ending in "/") in an S3-compatible bucket (ParseURL splits an s3://
// URL into the two), reached as c says. It does not touch the
// network.
//
// Writes are single PUTs with Content-MD5, so an object is stored whole
// or not at all; PutIfAbsent sends If-None-Match: * and PutIfMatch
// If-Match, which AWS S3 and MinIO evaluate atomically (a store that
// ignores the headers would make them plain Puts: sessctl checks for a
// lost race where it matters, and the conformance tests run against
// MinIO). ETags are the server's (the MD5 of the bytes, for objects
// written here without server-side encryption).
func NewClient(c Config, bucket, prefix string) (replica.Client, error) {
	if bucket == "" || (prefix != "" && !strings.HasSuffix(prefix, "/")) {
		return nil, fmt.Errorf("open s3://%s/%s: %w", bucket, prefix, replica.ErrBadRemote)
	}
	mc, err := newMinio(c)
	if err != nil {
		return nil, fmt.Errorf("open s3://%s/%s: %w", bucket, prefix, err)
	}
	return &s3Client{c: mc, bucket: bucket, prefix: prefix}, nil
}

// url names an object in errors.
func (s *s3Client) url(key string) string { return "s3://" + s.bucket + "/" + s.prefix + key }

// s3Error maps the server's answer to the Client's errors.
func (s *s3Client) s3Error(op, key string, err error) error {
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == "NoSuchBucket":
		return fmt.Errorf("%s %s: %w", op, s.url(key), replica.ErrNoBucket)
	case r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s %s: %w", op, s.url(key), replica.ErrObjectNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, s.url(key), err)
}

func (s *s3Client) Get(ctx context.Context, key string) (io.ReadCloser, replica.ObjectInfo, error) {
	// One GET: its reply's headers say what the object is, its body is
	// read as the caller reads.
	body, oi, _, err := minio.Core{Client: s.c}.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, replica.ObjectInfo{}, s.s3Error("download", key, err)
	}
	return &s3Reader{body: body, s: s, key: key}, replica.ObjectInfo{Key: key, Size: oi.Size, ETag: oi.ETag, ModTime: oi.LastModified}, nil
}

// s3Reader names the object in read errors.
type s3Reader struct {
	body io.ReadCloser
	s    *s3Client
	key  string
}

func (r *s3Reader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = r.s.s3Error("download", r.key, err)
	}
	return n, err
}

func (r *s3Reader) Close() error { return r.body.Close() }

func (s *s3Client) List(ctx context.Context, prefix string) iter.Seq2[replica.ObjectInfo, error] {
	return func(yield func(replica.ObjectInfo, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // stops the listing goroutine when the caller breaks out
		for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
			if o.Err != nil {
				yield(replica.ObjectInfo{}, s.s3Error("list", prefix, o.Err))
				return
			}
			key, ok := strings.CutPrefix(o.Key, s.prefix)
			if !ok {
				continue
			}
			if !yield(replica.ObjectInfo{Key: key, Size: o.Size, ETag: o.ETag, ModTime: o.LastModified}, nil) {
				return
			}
		}
	}
}

// The conditions of a put.
const (
	putAlways = iota
	putIfAbsent
	putIfMatch
)

func (s *s3Client) put(ctx context.Context, key string, r io.Reader, size int64, cond int, etag string) (replica.ObjectInfo, error) {
	if size < 0 {
		return replica.ObjectInfo{}, fmt.Errorf("upload %s: negative size %d", s.url(key), size)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true, SendContentMd5: true}
	switch cond {
	case putIfAbsent:
		opts.SetMatchETagExcept("*")
	case putIfMatch:
		if etag == "" || etag == "*" {
			return replica.ObjectInfo{}, fmt.Errorf("upload %s: %q is not an ETag", s.url(key), etag)
		}
		opts.SetMatchETag(etag)
	}
	if rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		// minio-go reads such a reader in place: check its length first.
		if n, err := remaining(rs); err != nil || n < size {
			if err == nil {
				err = replica.ErrShortBody
			}
			return replica.ObjectInfo{}, fmt.Errorf("upload %s: %w", s.url(key), err)
		}
	} else {
		// Any other reader minio-go reads into a buffer of size bytes, and
		// would then send what it got: a short one fails before that.
		r = &exactReader{r: r, left: size}
	}
	info, err := s.c.PutObject(ctx, s.bucket, s.prefix+key, r, size, opts)
	if err != nil {
		resp := minio.ToErrorResponse(err)
		// 409: a conditional write raced another one on the key.
		if cond != putAlways && (resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" || resp.StatusCode == http.StatusConflict) {
			if cond == putIfAbsent {
				return replica.ObjectInfo{}, fmt.Errorf("upload %s: %w", s.url(key), replica.ErrObjectExists)
			}
			return replica.ObjectInfo{}, fmt.Errorf("upload %s: %w", s.url(key), replica.ErrObjectChanged)
		}
		return replica.ObjectInfo{}, s.s3Error("upload", key, err)
	}
	return replica.ObjectInfo{Key: key, Size: info.Size, ETag: info.ETag, ModTime: info.LastModified}, nil
}

func (s *s3Client) Put(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	return s.put(ctx, key, r, size, putAlways, "")
}

func (s *s3Client) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	return s.put(ctx, key, r, size, putIfAbsent, "")
}

func (s *s3Client) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (replica.ObjectInfo, error) {
	return s.put(ctx, key, r, size, putIfMatch, etag)
}

func (s *s3Client) Delete(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		if err := s.s3Error("delete", key, err); !errors.Is(err, replica.ErrObjectNotFound) {
			return err
		}
	}
	return nil
}

// remaining returns how many bytes s holds from where it is.
func remaining(s io.Seeker) (int64, error) {
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := s.Seek(cur, io.SeekStart); err != nil {
		return 0, err
	}
	return end - cur, nil
}

// exactReader fails when r ends before left bytes were read.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		err = replica.ErrShortBody
	}
	return n, err
}

// newMinio makes the S3 client.
func newMinio(c Config) (*minio.Client, error) {
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return nil, ErrNoCredentials
	}
	host, secure := "s3.amazonaws.com", true
	lookup := minio.BucketLookupAuto
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("endpoint %q: not an http(s) URL", c.Endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
		lookup = minio.BucketLookupPath
	} else if c.Region != "" && c.Region != "us-east-1" {
		host = "s3." + c.Region + ".amazonaws.com"
	}
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	retries := c.MaxRetries
	if retries <= 0 {
		retries = 3
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
	return minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken),
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
		Transport:    tr,
		MaxRetries:   retries,
	})
}
