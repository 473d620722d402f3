package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// On real transcripts (../shared/transcripts), the first message is a line of the
// main conversation, never a sidechain's or a bookkeeping line's, and the transcript
// holds it; another transcript does not.
func TestFirstMessageOfRealTranscripts(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/transcripts/*.jsonl")
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no real transcripts in ../shared/transcripts; CI=true: a skipped real component is a failure")
		}
		t.Skip("no real transcripts in ../shared/transcripts")
	}
	uuids := map[string]string{}
	for _, f := range files {
		first := FirstMessageUUID(f)
		if first == "" {
			continue // a transcript of bookkeeping lines only
		}
		if !HoldsMessage(f, first) {
			t.Errorf("%s: does not hold its own first message %s", filepath.Base(f), first)
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e struct {
				Type        string `json:"type"`
				UUID        string `json:"uuid"`
				IsSidechain bool   `json:"isSidechain"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.UUID == first && (e.IsSidechain || e.Type == "summary") {
				t.Errorf("%s: first message %s is a %s line (sidechain %v)", filepath.Base(f), first, e.Type, e.IsSidechain)
			}
		}
		_ = fh.Close()
		uuids[f] = first
	}
	if len(uuids) < 3 {
		t.Fatalf("a first message in only %d of %d real transcripts", len(uuids), len(files))
	}
	for f, first := range uuids {
		for g := range uuids {
			if g != f && HoldsMessage(g, first) {
				t.Errorf("%s holds %s's first message", filepath.Base(g), filepath.Base(f))
			}
		}
	}
}
