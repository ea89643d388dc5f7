package agentuse_test

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

const (
	fuzzRoot    = "/data/agentuse/project/0123456789abcdef/session"
	fuzzGood    = fuzzRoot + "/01M7ZXJ0MFVTKGA72EB9Y8MQA5-fuzz"
	fuzzOdd     = fuzzRoot + "/01M7ZXJ0N1173DS6PYKKYQSKP7-odd"
	fuzzMessage = fuzzGood + "/01M7ZXJ0MH1G53XGHYCRZC43M5"
	fuzzOddMsg  = fuzzGood + "/01M7ZXJ0N2TQFZB4WRJ9CSRFMP"
	fuzzPart    = fuzzMessage + "/part/01M7ZXJ0MJEMWK8MT6JCBDFMVH.json"
)

const fuzzSessionJSON = `{
  "agent": {
    "id": "fuzz",
    "name": "fuzz",
    "isSubAgent": false
  },
  "model": "demo:hello",
  "version": "0.15.0",
  "id": "01M7ZXJ0MFVTKGA72EB9Y8MQA5",
  "status": "completed",
  "time": {
    "created": 1795293774480,
    "updated": 1795293774496
  }
}`

const fuzzMessageJSON = `{
  "id": "01M7ZXJ0MH1G53XGHYCRZC43M5",
  "role": "assistant",
  "time": {
    "created": 1795293774481
  }
}`

// FuzzAgentUsePart reads an AgentUse store in which the fuzz input is a
// part file, the message.json of a second message and the session.json of
// a second session. Reading never panics or fails; every file is either
// read (a JSON object, kept byte for byte) or reported as a corruption
// naming it, and the rest of the session still reads.
func FuzzAgentUsePart(f *testing.F) {
	for _, s := range []string{
		`{"id":"01M7ZXJ0MJEMWK8MT6JCBDFMVH","type":"text","text":"hi","time":{"start":1795293774482}}`,
		`{"type":"tool","tool":"bash","callID":"c1","state":{"status":"pending","suspendedAt":1}}`,
		`{"type":"tool","state":{"status":"completed","time":{"start":1e400}}}`,
		`{"type":"reasoning","time":{"start":"soon"},"id":7}`,
		`{"type":"text","time":{"start":-0},"role":"user","id":""}`,
		`[1,2]`, `null`, `{"type":`, ``, "\xff", `{} {}`,
	} {
		f.Add([]byte(s))
	}
	seeds := func(p string) bool {
		return strings.HasSuffix(p, ".json") && (strings.Contains(p, "/part/") || strings.HasSuffix(p, "/message.json"))
	}
	for _, data := range testenv.CorpusFiles(f, seeds, "agentuse") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfstest.NewCrashFS()
		write := func(name string, b []byte) {
			if err := fsys.MkdirAll(filepath.Dir(name), vfs.DirMode); err != nil {
				t.Fatal(err)
			}
			if err := vfs.WriteFileAtomic(fsys, name, b, vfs.FileMode); err != nil {
				t.Fatal(err)
			}
		}
		write(fuzzGood+"/session.json", []byte(fuzzSessionJSON))
		write(fuzzMessage+"/message.json", []byte(fuzzMessageJSON))
		write(fuzzPart, data)
		write(fuzzOddMsg+"/message.json", data)
		write(fuzzOdd+"/session.json", data)
		isObject := jsonl.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))

		store, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: fuzzRoot, FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		sessions, err := collectSessions(t.Context(), store)
		if err != nil {
			t.Fatalf("Sessions: %v", err)
		}
		if len(sessions) != 2 {
			t.Fatalf("%d sessions, want 2", len(sessions))
		}
		for _, x := range sessions {
			if x.Dir == fuzzOdd && (x.Err == nil) != isObject {
				t.Fatalf("session.json of %q: Err %v, but it is an object: %v", data, x.Err, isObject)
			}
			if x.Err != nil && !errors.Is(x.Err, agentuse.ErrCorrupt) {
				t.Fatalf("session.json error %v does not match ErrCorrupt", x.Err)
			}
			if x.Dir != fuzzGood {
				continue
			}
			c, err := store.Read(t.Context(), x)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			var good, odd *agentuse.Message
			for _, m := range c.Messages {
				switch m.Dir {
				case fuzzMessage:
					good = m
				case fuzzOddMsg:
					odd = m
				}
			}
			if good == nil || odd == nil {
				t.Fatalf("messages read: %d, want both", len(c.Messages))
			}
			if good.Err != nil {
				t.Fatalf("the valid message.json failed: %v", good.Err)
			}
			if (odd.Err == nil) != isObject || !bytes.Equal(odd.Raw, data) {
				t.Fatalf("message.json of %q: Err %v, Raw kept %v", data, odd.Err, bytes.Equal(odd.Raw, data))
			}
			problems := map[string]bool{}
			for _, p := range c.Problems {
				if !errors.Is(p, agentuse.ErrCorrupt) {
					t.Fatalf("problem %v does not match ErrCorrupt", p)
				}
				problems[p.Path] = true
			}
			if isObject {
				if len(good.Parts) != 1 || !bytes.Equal(good.Parts[0].Raw, data) || problems[fuzzPart] {
					t.Fatalf("the part %q was not read as it is: %d parts, problem %v", data, len(good.Parts), problems[fuzzPart])
				}
				p := good.Parts[0]
				if math.IsNaN(p.SortKey) || p.ID == "" {
					t.Fatalf("part read with sort key %v and id %q", p.SortKey, p.ID)
				}
			} else if len(good.Parts) != 0 || !problems[fuzzPart] {
				t.Fatalf("the broken part %q: %d parts read, reported %v", data, len(good.Parts), problems[fuzzPart])
			}
			if problems[fuzzMessage+"/message.json"] || len(problems) != btoi(!isObject)*2 {
				t.Fatalf("problems %v for input %q", problems, data)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
