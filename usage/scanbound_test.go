package usage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// userLine is a main-chain prompt: a line that never decides the usage.
const userLine = `{"parentUuid":"y","isSidechain":false,"type":"user","message":{"role":"user","content":"go on"},"uuid":"z","timestamp":"2026-11-20T18:01:00.000Z"}` + "\n"

// sparseTranscript writes head, makes the file size bytes long without writing them
// (a sparse file costs no disk), and appends tail: a giant transcript whose only
// usable line may be at its very start.
func sparseTranscript(t *testing.T, head string, size int64, tail string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "giant.jsonl")
	if err := os.WriteFile(path, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, tail)
	return path
}

// TestReadGiantTranscriptWithoutUsageInTail reads a 4 GB transcript whose last
// gigabytes hold no assistant line: the usage is unknown, told after reading about the
// scan bound, not the file.
func TestReadGiantTranscriptWithoutUsageInTail(t *testing.T) {
	path := sparseTranscript(t, laterAssistant+userLine, 4<<30, "\n"+userLine+userLine)
	start := time.Now()
	u, read, err := readCountingErr(t, path)
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "usage unknown") {
		t.Errorf("got %+v, %v; want a usage unknown error", u, err)
	}
	// Each byte of the window is read once, and again at most when a line is re-read.
	if read > 2*(32<<20) {
		t.Errorf("read %d bytes of a 4 GB transcript, want at most twice the 32 MiB bound", read)
	}
	t.Logf("%v, %d bytes read of 4 GB", elapsed, read)

	_, err = Read(path, Config{}, Client{})
	want := "transcript " + path + ": usage unknown: no assistant line in its last 32 MiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Read: got %v, want an error starting %q", err, want)
	}
}

// TestReadMaxScanBytes moves the bound with the setting: a line within it tells the
// usage, one past it does not.
func TestReadMaxScanBytes(t *testing.T) {
	filler := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 1000) + `"}}` + "\n"
	tail := func(n int) string { return strings.Repeat(filler, n/len(filler)+1) }
	for _, tt := range []struct {
		name    string
		content string
		max     int64
		unknown bool
		source  string // what a read that ends tells the usage from
	}{
		{"within", laterAssistant + tail(512<<10), 1 << 20, false, "assistant"},
		{"past", laterAssistant + tail(2<<20), 1 << 20, true, ""},
		{"past the default, within the setting", laterAssistant + tail(33<<20), 40 << 20, false, "assistant"},
		{"a file no longer than the bound, with no usage yet", tail(512 << 10), 1 << 20, false, "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			u, err := Read(path, Config{MaxScanBytes: tt.max}, Client{})
			if tt.unknown {
				var ue *UnknownError
				if !errors.Is(err, ErrUnknown) || !errors.As(err, &ue) || ue.Scanned != tt.max {
					t.Errorf("got %+v, %v; want ErrUnknown after %d bytes", u, err, tt.max)
				}
				if err != nil && !strings.Contains(err.Error(), "no assistant line in its last 1 MiB") {
					t.Errorf("got %q, want the bound in MiB", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Source != tt.source {
				t.Errorf("usage from %q (%d tokens), want from %q", u.Source, u.TokensUsed, tt.source)
			}
		})
	}
}

// forwardWithin is forward reading of the last maxScan bytes of data: the line cut at
// their start is not judged, and no line that decides makes the usage unknown.
func forwardWithin(data []byte, maxLen int, maxScan int64) finding {
	if maxScan <= 0 || int64(len(data)) <= maxScan {
		return forward(data, maxLen)
	}
	window := data[int64(len(data))-maxScan:]
	i := bytes.IndexByte(window, '\n')
	if i < 0 {
		return finding{source: sourceUnknown}
	}
	f := forward(window[i+1:], maxLen)
	if f.source == SourceNone {
		f.source = sourceUnknown
	}
	return f
}

func TestScanWithinBoundAgreesWithForwardReading(t *testing.T) {
	data := []byte(laterAssistant + userLine + strings.Replace(laterAssistant, `"isSidechain":false`, `"isSidechain":true`, 1) + userLine + userLine)
	for maxScan := int64(1); maxScan <= int64(len(data))+1; maxScan++ {
		for _, lim := range []limits{
			{firstChunk: 1, maxChunk: 1, maxLine: 1 << 30},
			{firstChunk: 7, maxChunk: 64, maxLine: 300},
			defaultLimits,
		} {
			lim.maxScan = maxScan
			got, err := scan(bytes.NewReader(data), int64(len(data)), lim)
			if err != nil {
				t.Fatal(err)
			}
			if want := forwardWithin(data, lim.maxLine, maxScan); got != want {
				t.Fatalf("max %d, limits %+v: got %+v, want %+v", maxScan, lim, got, want)
			}
		}
	}
}
