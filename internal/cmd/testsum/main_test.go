package main

import (
	"strings"
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"Action":"run","Package":"example.com/a","Test":"TestPi"}`,
		`{"Action":"output","Package":"example.com/a","Test":"TestPi","Output":"=== RUN   TestPi\n"}`,
		`{"Action":"output","Package":"example.com/a","Test":"TestPi","Output":"    pi_test.go:12: skipping: pi is not installed (run scripts/pi-install.sh)\n"}`,
		`{"Action":"output","Package":"example.com/a","Test":"TestPi","Output":"--- SKIP: TestPi (0.00s)\n"}`,
		`{"Action":"skip","Package":"example.com/a","Test":"TestPi"}`,
		`{"Action":"output","Package":"example.com/b","Test":"TestPi2","Output":"    x_test.go:3: skipping: pi is not installed (run scripts/pi-install.sh)\n"}`,
		`{"Action":"skip","Package":"example.com/b","Test":"TestPi2"}`,
		`{"Action":"output","Package":"example.com/a","Test":"TestBad","Output":"    a_test.go:9: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"example.com/a","Test":"TestBad"}`,
		`{"Action":"pass","Package":"example.com/a","Test":"TestGood"}`,
		`{"Action":"output","Package":"example.com/a","Test":"TestGood","Output":"noise\n"}`,
		`{"Action":"fail","Package":"example.com/a","Elapsed":1.5}`,
		`{"Action":"pass","Package":"example.com/b","Elapsed":0.25}`,
		`# example.com/c`,
	}, "\n")
	var out strings.Builder
	code := run(strings.NewReader(in), &out, func() time.Time { return time.Unix(0, 0) })
	got := out.String()
	if code != 1 {
		t.Errorf("exit code %d, want 1 (a test failed)", code)
	}
	for _, want := range []string{
		"FAIL  example.com/a",
		"ok    example.com/b",
		"--- FAIL: TestBad (example.com/a)\n        a_test.go:9: got 1, want 2\n",
		"# example.com/c\n",
		"2 packages, 1 test failed, 1 package failed",
		"skipped:\n  skipping: pi is not installed (run scripts/pi-install.sh) (2 in example.com/a, example.com/b)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "noise") {
		t.Errorf("output of a passing test was printed:\n%s", got)
	}
}

func TestAllPass(t *testing.T) {
	t.Parallel()
	in := `{"Action":"pass","Package":"example.com/a","Test":"TestX"}` + "\n" + `{"Action":"pass","Package":"example.com/a","Elapsed":2}` + "\n"
	var out strings.Builder
	if code := run(strings.NewReader(in), &out, time.Now); code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "no tests skipped") {
		t.Errorf("output lacks the empty skip summary:\n%s", out.String())
	}
	if code := run(strings.NewReader(""), &out, time.Now); code != 1 {
		t.Errorf("no input: exit code %d, want 1", code)
	}
}
