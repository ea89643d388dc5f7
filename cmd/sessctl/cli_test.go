package main

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Tests of the CLI conventions every command shares: flag values, exit
// codes, --version, output safety.

// TestWaitFlag checks that every command's --wait refuses a negative
// duration and explains a missing unit, with the usage exit code.
func TestWaitFlag(t *testing.T) {
	for _, cmd := range []string{"compact", "branch", "label", "name", "delete", "migrate"} {
		for _, tc := range []struct{ val, want string }{
			{"-5s", "cannot be negative"},
			{"10", "needs a unit, for example 10s"},
		} {
			_, errOut, code := runCLI(t, cmd, "--wait", tc.val, "nosuch.jsonl")
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("%s --wait %s: exit %d, stderr %q; want exit %d and %q", cmd, tc.val, code, errOut, exitUsage, tc.want)
			}
		}
	}
}

// TestCountFlagHelp checks that --keep-tokens and --reserve-tokens show
// no default they would refuse, and refuse negative counts as usage
// mistakes.
func TestCountFlagHelp(t *testing.T) {
	out, _, code := runCLI(t, "help", "compact")
	if code != exitOK {
		t.Fatalf("help compact: exit %d", code)
	}
	if strings.Contains(out, "(default -1)") {
		t.Errorf("help compact shows a default the flag refuses:\n%s", out)
	}
	for _, flag := range []string{"--keep-tokens", "--reserve-tokens"} {
		_, errOut, code := runCLI(t, "compact", flag, "-1", "nosuch.jsonl")
		if code != exitUsage || !strings.Contains(errOut, "must be 0 or more") {
			t.Errorf("compact %s -1: exit %d, stderr %q", flag, code, errOut)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version"} {
		out, errOut, code := runCLI(t, arg)
		if code != exitOK || errOut != "" || !strings.HasPrefix(out, "sessctl ") || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
			t.Errorf("sessctl %s: exit %d, stdout %q, stderr %q; want one line \"sessctl VERSION\"", arg, code, out, errOut)
		}
	}
}

// TestEmptySession checks that an empty SESSION is a usage mistake (exit
// 2), not a failure (exit 1).
func TestEmptySession(t *testing.T) {
	for _, args := range [][]string{
		{"show", ""}, {"stats", ""}, {"dump", ""}, {"export", ""}, {"tree", ""},
		{"context", ""}, {"who", ""}, {"repair", ""}, {"fork", ""}, {"compact", ""},
		{"branch", "", "x"}, {"label", "", "x"}, {"name", "", "x"}, {"delete", ""},
	} {
		_, errOut, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "SESSION is empty") {
			t.Errorf("sessctl %s '': exit %d, stderr %q; want exit %d", args[0], code, errOut, exitUsage)
		}
	}
}

// TestDumpFields checks that dump --fields refuses names it does not
// know (it printed {} and exited 0) and prints the ones it does.
func TestDumpFields(t *testing.T) {
	dir := t.TempDir()
	main := buildFixtures(t, filepath.Join(dir, "sessions"))
	cases := []struct {
		fields   string
		code     int
		wantKeys string // the object's keys, or what stderr says
	}{
		{"nosuch", exitUsage, `unknown field "nosuch"`},
		{"leafId,nosuch", exitUsage, `unknown field "nosuch"`},
		{",", exitUsage, "names no field"},
		{"contextByLeaf", exitUsage, "needs --context-by-leaf"},
		{"leafId, sessionName", exitOK, "leafId,sessionName"},
		{"sessionInfo", exitOK, "sessionInfo"},
	}
	for _, tc := range cases {
		out, errOut, code := runCLI(t, "dump", "--fields", tc.fields, main)
		if code != tc.code {
			t.Errorf("dump --fields %q: exit %d, want %d; stderr %q", tc.fields, code, tc.code, errOut)
			continue
		}
		if tc.code != exitOK {
			if !strings.Contains(errOut, tc.wantKeys) || out != "" {
				t.Errorf("dump --fields %q: stdout %q, stderr %q; want only an error saying %q", tc.fields, out, errOut, tc.wantKeys)
			}
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("dump --fields %q: %v", tc.fields, err)
		}
		var keys []string
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if got := strings.Join(keys, ","); got != tc.wantKeys {
			t.Errorf("dump --fields %q printed keys %s, want %s", tc.fields, got, tc.wantKeys)
		}
	}
	out, errOut, code := runCLI(t, "dump", "--context-by-leaf", "--fields", "contextAtNullLeaf", main)
	if code != exitOK || !strings.HasPrefix(out, `{"contextAtNullLeaf":`) {
		t.Errorf("dump --context-by-leaf --fields contextAtNullLeaf: exit %d, stdout %.80q, stderr %q", code, out, errOut)
	}
}
