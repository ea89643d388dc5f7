package testenv

// MinIO, the S3-compatible server that the replication tests run against
// (a real server on loopback, never a fake).

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// MinIOServer is a MinIO server on a loopback port with its own data
// directory.
type MinIOServer struct {
	// Addr is host:port; URL is http://Addr.
	Addr, URL string
	// User and Password are the root credentials (AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY for clients).
	User, Password string
	// Dir holds the server's data.
	Dir string

	bin string
	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

var shared struct {
	once sync.Once
	srv  *MinIOServer
	err  error
}

// MinIOBin is where the tests look for the MinIO server binary:
// $SESSCTL_MINIO, else ${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}/bin/minio,
// where scripts/minio.sh install puts it.
func MinIOBin() string {
	if b := os.Getenv("SESSCTL_MINIO"); b != "" {
		return b
	}
	cache := os.Getenv("SESSCTL_CACHE")
	if cache == "" {
		c := os.Getenv("XDG_CACHE_HOME")
		if c == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			c = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(c, "sessctl")
	}
	return filepath.Join(cache, "bin", "minio")
}

// minioBin returns the binary or skips (fails under SESSCTL_REQUIRE_MINIO=1).
func minioBin(t testing.TB) string {
	t.Helper()
	bin := MinIOBin()
	if _, err := os.Stat(bin); err != nil {
		msg := "MinIO is not installed at " + bin + " (run scripts/minio.sh install, or set SESSCTL_MINIO)"
		if os.Getenv("SESSCTL_REQUIRE_MINIO") == "1" {
			t.Fatalf("SESSCTL_REQUIRE_MINIO=1 but %s", msg)
		}
		t.Skipf("skipping: %s", msg)
	}
	return bin
}

// MinIO returns the server shared by the tests of this test binary,
// starting it on first use. It is stopped when Main's tests finish (a
// package using it calls Main from its TestMain). Tests share it, so each
// uses its own bucket.
func MinIO(t testing.TB) *MinIOServer {
	t.Helper()
	bin := minioBin(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "sessctl-minio-")
		if err != nil {
			shared.err = err
			return
		}
		shared.srv, shared.err = startMinIO(bin, dir)
	})
	if shared.err != nil {
		t.Fatalf("start MinIO: %v", shared.err)
	}
	return shared.srv
}

// NewMinIO starts a server of the test's own, which the test may Kill and
// Start again (same port, same data); it is stopped when the test ends.
func NewMinIO(t testing.TB) *MinIOServer {
	t.Helper()
	bin := minioBin(t)
	srv, err := startMinIO(bin, t.TempDir())
	if err != nil {
		t.Fatalf("start MinIO: %v", err)
	}
	t.Cleanup(func() { srv.Kill() })
	return srv
}

// stopShared stops the shared server, if one was started, and removes its
// data.
func stopShared() {
	if shared.srv != nil {
		shared.srv.Kill()
		os.RemoveAll(shared.srv.Dir)
	}
}

func startMinIO(bin, dir string) (*MinIOServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	s := &MinIOServer{Addr: addr, URL: "http://" + addr, User: "sessctl", Password: "sessctl-" + strconv.FormatInt(time.Now().UnixNano(), 36), Dir: dir, bin: bin}
	return s, s.Start()
}

// Start starts the server (again, after Kill) and waits until it is live.
func (s *MinIOServer) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("minio: already running")
	}
	log, err := os.OpenFile(filepath.Join(s.Dir, "minio.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "server", "--quiet", "--address", s.Addr, "--console-address", "127.0.0.1:0", filepath.Join(s.Dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.User, "MINIO_ROOT_PASSWORD="+s.Password, "MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = log, log
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("minio: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.cmd, s.log = cmd, log
	// A loaded 2-core machine can take a while.
	deadline := time.Now().Add(90 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			s.cmd = nil
			log.Close()
			data, _ := os.ReadFile(filepath.Join(s.Dir, "minio.log"))
			return fmt.Errorf("minio exited (%v): %s", err, tail(data))
		default:
		}
		// Live and ready is not yet serving requests after a restart:
		// an anonymous request is refused (403) once it is, and gets
		// 503 (XMinioServerNotInitialized) before.
		resp, err := client.Get(s.URL + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if resp, err = client.Get(s.URL + "/"); err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusServiceUnavailable {
						go func() { <-exited }()
						return nil
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return errors.New("minio did not become live in 90 s")
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *MinIOServer) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Process.Wait()
	s.cmd = nil
	s.log.Close()
}

// Env returns the AWS_* variables a client needs to reach the server.
func (s *MinIOServer) Env() []string {
	return []string{"AWS_ENDPOINT_URL=" + s.URL, "AWS_ACCESS_KEY_ID=" + s.User, "AWS_SECRET_ACCESS_KEY=" + s.Password, "AWS_REGION=us-east-1"}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
