package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/internal/clienttest"
	"github.com/sessctl/sessctl/replica/s3"
)

// conf is the configuration of the server as sessctl sync reads it.
func conf(srv *testenv.MinIOServer) s3.Config {
	return s3.EnvConfig(func(k string) (string, bool) {
		for _, kv := range srv.Env() {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v, true
			}
		}
		return "", false
	})
}

// bucket makes a new bucket on the server, with the raw MinIO client.
func bucket(t *testing.T, srv *testenv.MinIOServer) string {
	t.Helper()
	c, err := minio.New(srv.Addr, &minio.Options{Creds: credentials.NewStaticV4(srv.User, srv.Password, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "t-" + hex.EncodeToString(b)
	if err := c.MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	return name
}

// TestClientConformance holds the S3 Client, against the real MinIO
// server, to the contract of replica.Client that the directory one is
// held to.
func TestClientConformance(t *testing.T) {
	srv := testenv.MinIO(t)
	mk := func(t *testing.T, remote string) replica.Client {
		c, err := s3.Backend(conf(srv))(remote)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clienttest.Conformance(t,
		func(t *testing.T) replica.Client { return mk(t, "s3://"+bucket(t, srv)+"/team/sessions") },
		func(t *testing.T) replica.Client { return mk(t, "s3://sessctl-no-such-bucket/p") })
}

func TestParseURL(t *testing.T) {
	for remote, want := range map[string][2]string{
		"s3://b":            {"b", ""},
		"s3://b/":           {"b", ""},
		"s3://b/team":       {"b", "team/"},
		"s3://b//team/x//":  {"b", "team/x/"},
		"s3://b/team/x.y/z": {"b", "team/x.y/z/"},
	} {
		b, p, err := s3.ParseURL(remote)
		if err != nil || b != want[0] || p != want[1] {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", remote, b, p, err, want[0], want[1])
		}
	}
	for _, remote := range []string{"b/team", "s3://", "s3:///team", "s3://a b/x", "s3://b/../x", "s3://b/x/./y", "file:///tmp"} {
		if _, _, err := s3.ParseURL(remote); !errors.Is(err, replica.ErrBadRemote) {
			t.Errorf("ParseURL(%q): %v, want ErrBadRemote", remote, err)
		}
	}
}

func TestEnvConfig(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      " http://a:9000 ",
		"AWS_ENDPOINT_URL_S3":   "http://b:9000",
		"AWS_ACCESS_KEY_ID":     "id",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "tok",
		"AWS_DEFAULT_REGION":    "eu-west-1",
	}
	c := s3.EnvConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want := s3.Config{Endpoint: "http://b:9000", AccessKeyID: "id", SecretAccessKey: "secret", SessionToken: "tok", Region: "eu-west-1"}
	if c != want {
		t.Errorf("EnvConfig = %+v, want %+v", c, want)
	}
}

// A Backend refuses what cannot reach a bucket before any request:
// no credentials, an endpoint that is no http(s) URL, a bad URL.
func TestBackendRefuses(t *testing.T) {
	open := s3.Backend(s3.Config{Endpoint: "http://127.0.0.1:9"})
	if _, err := open("s3://b/p"); !errors.Is(err, s3.ErrNoCredentials) {
		t.Errorf("no credentials: %v, want ErrNoCredentials", err)
	}
	open = s3.Backend(s3.Config{Endpoint: "ftp://x", AccessKeyID: "k", SecretAccessKey: "s"})
	if _, err := open("s3://b/p"); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("ftp endpoint: %v, want not an http(s) URL", err)
	}
	open = s3.Backend(s3.Config{Endpoint: "http://127.0.0.1:9", AccessKeyID: "k", SecretAccessKey: "s"})
	if _, err := open("s3:///p"); !errors.Is(err, replica.ErrBadRemote) {
		t.Errorf("no bucket: %v, want ErrBadRemote", err)
	}
}

// replica.Open picks the Backend by the remote's scheme; without one for
// s3:// it refuses the remote instead of opening something else.
func TestOpenPicksTheBackend(t *testing.T) {
	c := s3.Config{Endpoint: "http://127.0.0.1:9", AccessKeyID: "k", SecretAccessKey: "s"}
	r, err := replica.Open(replica.Options{Remote: "s3://b/p", Backends: map[string]replica.Backend{s3.Scheme: s3.Backend(c)}})
	if err != nil {
		t.Fatalf("open with the s3 backend: %v", err)
	}
	r.Close()
	if _, err := replica.Open(replica.Options{Remote: "s3://b/p"}); !errors.Is(err, replica.ErrBadRemote) {
		t.Errorf("open s3:// without a backend: %v, want ErrBadRemote", err)
	}
}
