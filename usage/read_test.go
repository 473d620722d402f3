package usage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/testkit/fixture"
)

// transcript generates a transcript in a temporary folder and returns its path.
func transcript(tb testing.TB, o fixture.TranscriptOptions) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "session.jsonl")
	if err := fixture.WriteTranscript(path, o); err != nil {
		tb.Fatal(err)
	}
	return path
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const laterAssistant = `{"parentUuid":"x","isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_later","role":"assistant","content":[{"type":"text","text":"Back to work."}],"usage":{"input_tokens":10,"cache_creation_input_tokens":5000,"cache_read_input_tokens":25000,"output_tokens":40}},"uuid":"y","timestamp":"2026-11-20T18:00:00.000Z"}` + "\n"

func TestRead(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name   string
		o      fixture.TranscriptOptions
		append string // text added to the generated transcript
		cfg    Config
		tokens int
		window int
		source string
		model  string
	}{
		{name: "plain", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 120_000},
			tokens: 120_000, window: 200_000, source: SourceAssistant},
		{name: "5 MB tool result after the last assistant line", o: fixture.TranscriptOptions{Bytes: 8 * mb, FinalTokens: 140_000, HugeToolResultAfter: 5 * mb},
			tokens: 140_000, window: 200_000, source: SourceAssistant},
		{name: "12 MB tool result, longer than a line may be", o: fixture.TranscriptOptions{Bytes: 13 * mb, FinalTokens: 140_000, HugeToolResultAfter: 12 * mb},
			tokens: 140_000, window: 200_000, source: SourceAssistant},
		{name: "a 6 MB assistant line is skipped, its message's other line counts", o: fixture.TranscriptOptions{Bytes: 7 * mb, FinalTokens: 99_000, HugeAssistantLine: 6 * mb},
			tokens: 99_000, window: 200_000, source: SourceAssistant},
		{name: "2 MB assistant line", o: fixture.TranscriptOptions{Bytes: 3 * mb, FinalTokens: 99_000, HugeAssistantLine: 2 * mb},
			tokens: 99_000, window: 200_000, source: SourceAssistant},
		{name: "compacted, with postTokens", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 160_000, CompactBoundaryAtEnd: true, PostTokens: 21_500},
			tokens: 21_500, window: 200_000, source: SourceCompactBoundary, model: "-"},
		{name: "compacted, without postTokens", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 160_000, CompactBoundaryAtEnd: true},
			tokens: 0, window: 200_000, source: SourceCompactBoundary, model: "-"},
		{name: "compacted from past 200k: the window stays 1M", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 700_000, CompactBoundaryAtEnd: true, PostTokens: 30_000},
			tokens: 30_000, window: 1_000_000, source: SourceCompactBoundary, model: "-"},
		{name: "an assistant line after the compaction", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 160_000, CompactBoundaryAtEnd: true, PostTokens: 21_500},
			append: laterAssistant, tokens: 30_010, window: 200_000, source: SourceAssistant},
		{name: "sidechain lines after", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 110_000, SidechainAfter: true},
			tokens: 110_000, window: 200_000, source: SourceAssistant},
		{name: "synthetic line after", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 110_000, SyntheticAfter: true},
			tokens: 110_000, window: 200_000, source: SourceAssistant},
		{name: "sidechain, synthetic and a tool result after", o: fixture.TranscriptOptions{Bytes: 2 * mb, FinalTokens: 150_000, SidechainAfter: true, SyntheticAfter: true, HugeToolResultAfter: mb},
			tokens: 150_000, window: 200_000, source: SourceAssistant},
		{name: "1m model", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 64_000, Model: "claude-sonnet-4-5[1m]"},
			tokens: 64_000, window: 1_000_000, source: SourceAssistant, model: "claude-sonnet-4-5[1m]"},
		{name: "past 200k on a model that does not say 1m", o: fixture.TranscriptOptions{Bytes: 2 * mb, FinalTokens: 250_000, Model: "claude-opus-4-6"},
			tokens: 250_000, window: 1_000_000, source: SourceAssistant, model: "claude-opus-4-6"},
		{name: "configured window, for a model ctx does not know", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 64_000, Model: "gpt-x"},
			cfg: Config{Window: 500_000, Reserve: 50_000}, tokens: 64_000, window: 500_000, source: SourceAssistant, model: "gpt-x"},
		{name: "configured window, for a model ctx knows", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 64_000},
			cfg: Config{Window: 500_000, Reserve: 50_000}, tokens: 64_000, window: 200_000, source: SourceAssistant},
		{name: "the default model", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 126_000, Model: "claude-opus-5-5"},
			tokens: 126_000, window: 1_000_000, source: SourceAssistant, model: "claude-opus-5-5"},
		{name: "torn last line", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 120_000},
			append: laterAssistant[:len(laterAssistant)/2], tokens: 120_000, window: 200_000, source: SourceAssistant},
		{name: "garbage after", o: fixture.TranscriptOptions{Bytes: mb, FinalTokens: 120_000},
			append: "\n\n\x00\xff not json\n{\"type\":\"assistant\",\"usage\":\n[]\n", tokens: 120_000, window: 200_000, source: SourceAssistant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := transcript(t, tt.o)
			if tt.append != "" {
				appendTo(t, path, tt.append)
			}
			u, err := Read(path, tt.cfg, Client{})
			if err != nil {
				t.Fatal(err)
			}
			model := tt.model
			switch model {
			case "":
				model = "claude-sonnet-4-5"
			case "-":
				model = ""
			}
			if u.TokensUsed != tt.tokens || u.Window != tt.window || u.Source != tt.source || u.Model != model {
				t.Errorf("got %d tokens of %d, source %q, model %q; want %d of %d, %q, %q",
					u.TokensUsed, u.Window, u.Source, u.Model, tt.tokens, tt.window, tt.source, model)
			}
			if want := Compute(tt.tokens, model, tt.source, tt.cfg, Client{}); u.Budget != u.Window-u.Reserve ||
				(tt.source == SourceAssistant && *u != *want) {
				t.Errorf("got %+v, want %+v", *u, *want)
			}
		})
	}
}

func TestReadWithoutUsage(t *testing.T) {
	for name, content := range map[string]string{
		"empty":                     "",
		"one newline":               "\n",
		"no assistant yet":          `{"type":"summary","summary":"x"}` + "\n" + `{"type":"user","message":{"role":"user","content":"hello"}}` + "\n",
		"only sidechain":            strings.Replace(laterAssistant, `"isSidechain":false`, `"isSidechain":true`, 1),
		"only synthetic":            strings.Replace(laterAssistant, `claude-sonnet-4-5`, `<synthetic>`, 1),
		"no usage":                  `{"type":"assistant","message":{"model":"claude-sonnet-4-5","content":[]}}`,
		"nested in a progress line": `{"type":"progress","data":{"message":{"type":"assistant","message":{"model":"m","usage":{"input_tokens":5}}}}}` + "\n",
		"escaped in a tool result":  `{"type":"user","message":{"content":[{"type":"tool_result","content":"{\"type\":\"assistant\",\"message\":{\"usage\":{\"input_tokens\":5}}}"}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			u, err := Read(path, Config{}, Client{})
			if err != nil {
				t.Fatal(err)
			}
			if u.Source != SourceNone || u.TokensUsed != 0 || u.Window != DefaultWindow {
				t.Errorf("got %+v, want source none, 0 tokens, the default window", *u)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()

	_, err := Read(filepath.Join(dir, "missing.jsonl"), Config{}, Client{})
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "transcript: ") {
		t.Errorf("missing file: got %v, want a transcript error wrapping os.ErrNotExist", err)
	}

	if _, err := Read(dir, Config{}, Client{}); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: got %v, want an error", err)
	}

	path := transcript(t, fixture.TranscriptOptions{})
	if _, err := Read(path, Config{WarnAt: 0.95}, Client{}); err == nil || !strings.HasPrefix(err.Error(), "warn_at:") {
		t.Errorf("bad config: got %v, want the warn_at error", err)
	}
}

func TestReadFIFODoesNotHang(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read(path, Config{}, Client{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("got %v, want a not-a-regular-file error", err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open so that the test process can end.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("Read of a named pipe hangs")
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// readCounting reads path as Read does and returns the usage and the bytes read.
func readCounting(t testing.TB, path string) (*Usage, int64) {
	t.Helper()
	u, n, err := readCountingErr(t, path)
	if err != nil {
		t.Fatal(err)
	}
	return u, n
}

// readCountingErr is readCounting that returns the read's error.
func readCountingErr(t testing.TB, path string) (*Usage, int64, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	c := &countingReader{r: f}
	u, err := readTail(c, info.Size(), Config{}, Client{}, defaultLimits)
	return u, c.n.Load(), err
}

func TestReadOnlyTheTail(t *testing.T) {
	sizes := []int{50 << 20, 200 << 20}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("%d MB", size>>20), func(t *testing.T) {
			if size > 50<<20 && testing.Short() {
				t.Skip("200 MB transcript: not with -short")
			}
			path := transcript(t, fixture.TranscriptOptions{Bytes: size, FinalTokens: 131_000})
			info, err := os.Stat(path)
			if err != nil || info.Size() < int64(size)*9/10 {
				t.Fatalf("generated transcript: %v, %v bytes, want about %d", err, info, size)
			}
			u, n := readCounting(t, path)
			if u.TokensUsed != 131_000 {
				t.Errorf("got %d tokens, want 131000", u.TokensUsed)
			}
			if n >= 1<<20 {
				t.Errorf("read %d bytes of a %d-byte transcript, want under 1 MB", n, size)
			}
			t.Logf("read %d bytes of %d", n, info.Size())
		})
	}

	t.Run("past a 5 MB tool result", func(t *testing.T) {
		const huge = 5 << 20
		path := transcript(t, fixture.TranscriptOptions{Bytes: 20 << 20, FinalTokens: 131_000, HugeToolResultAfter: huge})
		u, n := readCounting(t, path)
		if u.TokensUsed != 131_000 {
			t.Errorf("got %d tokens, want 131000", u.TokensUsed)
		}
		// The long line is read through once, or twice if it is short enough to be held
		// and judged, and a chunk around it.
		if n > 2*huge+2*maxChunk {
			t.Errorf("read %d bytes to pass a %d-byte line", n, huge)
		}
	})
}

// TestReadMemory checks that a line too long to hold is skipped without being held, and
// that long lines that are held are not held twice over.
func TestReadMemory(t *testing.T) {
	for name, tt := range map[string]struct {
		o   fixture.TranscriptOptions
		cfg Config
	}{
		// Further back than the default bound: only a larger one reaches it.
		"past a 40 MB tool result": {fixture.TranscriptOptions{Bytes: 42 << 20, FinalTokens: 77_000, HugeToolResultAfter: 40 << 20},
			Config{MaxScanBytes: 64 << 20}},
		"past a 3.9 MB tool result to a 3.5 MB assistant line": {fixture.TranscriptOptions{Bytes: 10 << 20, FinalTokens: 77_000,
			HugeToolResultAfter: 3900 << 10, HugeAssistantLine: 3500 << 10}, Config{}},
	} {
		t.Run(name, func(t *testing.T) {
			path := transcript(t, tt.o)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			u, err := Read(path, tt.cfg, Client{})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if u.TokensUsed != 77_000 {
				t.Errorf("got %d tokens, want 77000", u.TokensUsed)
			}
			// The hook's whole process must stay under 20 MB.
			const bound = 12 << 20
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
				t.Errorf("allocated %d bytes, want at most %d", alloc, bound)
			}
		})
	}
}

// forward is the plain reading of a transcript the backward scan must agree with: every
// line in order, the last one that decides winning.
func forward(data []byte, maxLen int) finding {
	last := finding{source: SourceNone}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(line) > maxLen {
			continue
		}
		if f, ok := judge(line); ok {
			last = f
		}
	}
	return last
}

func TestScanAgreesWithForwardReading(t *testing.T) {
	var inputs [][]byte
	for _, o := range []fixture.TranscriptOptions{
		{Bytes: 64 << 10},
		{Bytes: 300 << 10, CompactBoundaryAtEnd: true},
		{Bytes: 300 << 10, SidechainAfter: true, SyntheticAfter: true, HugeToolResultAfter: 100 << 10},
	} {
		b, err := os.ReadFile(transcript(t, o))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte(laterAssistant), []byte(strings.TrimSuffix(laterAssistant, "\n")), []byte("\n\n"), nil)

	for i, data := range inputs {
		for _, lim := range []limits{
			{firstChunk: 1, maxChunk: 1, maxLine: 1 << 30},
			{firstChunk: 3, maxChunk: 17, maxLine: 1 << 30},
			{firstChunk: 4096, maxChunk: 4096, maxLine: 1 << 30},
			{firstChunk: 7, maxChunk: 64, maxLine: 2000},
			defaultLimits,
		} {
			got, err := scan(bytes.NewReader(data), int64(len(data)), lim)
			if err != nil {
				t.Fatal(err)
			}
			if want := forward(data, lim.maxLine); got != want {
				t.Errorf("input %d, limits %+v: got %+v, want %+v", i, lim, got, want)
			}
		}
	}
}

// shrinking is a file that lost its tail after it was measured.
type shrinking struct{ data []byte }

func (s shrinking) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.data[:len(s.data)/2]).ReadAt(p, off)
}

func TestScanReportsAShrunkFile(t *testing.T) {
	data := []byte(strings.Repeat(laterAssistant, 10))
	_, err := scan(shrinking{data}, int64(len(data)), defaultLimits)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
	}
}
