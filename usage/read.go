package usage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// How the transcript is read: from the end, in chunks that double from firstChunk up to
// maxChunk, so that the common case reads one small chunk and a long stretch without a
// usable line costs few system calls. A line longer than maxLine is skipped unread. No
// line that counts comes near it: an assistant line holds a block of one response,
// which the model's output limit bounds (128k tokens at most, about 1 MB of JSON), and
// compaction lines are small; the long lines are tool results. Two lines of maxLine
// (one about to be dropped) and a chunk keep a hook well below its 20 MB.
const (
	firstChunk = 64 << 10
	maxChunk   = 1 << 20
	maxLine    = 4 << 20
)

// Cheap markers tried before any JSON is decoded. A line decides the usage only if it
// holds the string "assistant" (an assistant line's type) or "compact_boundary" (a
// compaction's subtype), and such a string is written as these bytes whatever the
// spacing of the line, unless a letter of it is a \u escape (escapesASCII). Keys are not
// looked at: they may be escaped too, and encoding/json matches them in any letter case.
// A line with a marker may still be something else (a string ending in an escaped quote
// and the word, a subagent's progress line) and is told apart once decoded.
var (
	markAssistant = []byte(`"assistant"`)
	markCompact   = []byte(`"compact_boundary"`)
)

// markEscape starts a \u escape of a character below U+0100.
var markEscape = []byte(`\u00`)

// escapesASCII reports whether line may hold a printable ASCII character written as a
// \u escape (\u0020 to \u007f): then no byte marker can rule a line out, and it must be
// decoded. JSON.stringify (Claude Code) escapes only control characters, and Python's
// json.dumps those and non-ASCII ones, so a real transcript costs no decoding here.
func escapesASCII(line []byte) bool {
	for rest := line; ; {
		i := bytes.Index(rest, markEscape)
		if i < 0 || i+len(markEscape) >= len(rest) {
			return false
		}
		rest = rest[i+len(markEscape):]
		if '2' <= rest[0] && rest[0] <= '7' {
			return true
		}
	}
}

// syntheticModel is the model id Claude Code gives the assistant lines it writes itself
// for API errors and interruptions; their usage is not the context's.
const syntheticModel = "<synthetic>"

// Read computes usage from the transcript at path (JSONL): the input, cache-creation and
// cache-read tokens of the latest main-chain assistant line, or the size after a
// compaction that is newer than any such line. It reads backwards from the end, so its
// cost follows the distance to that line, not the size of the file, and it looks no
// further back than cfg's MaxScanBytes: past that, the usage is unknown (an error
// wrapping ErrUnknown), which bounds the cost of a giant file with no such line in its
// tail. A transcript with no usable line yet (all of it read) gives Source "none" and 0
// tokens; a missing file is an error wrapping os.ErrNotExist. The window and the budget
// come from the transcript's model and Claude Code's configuration cl (see Compute).
func Read(path string, cfg Config, cl Client) (*Usage, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// O_NONBLOCK: opening a named pipe for reading would otherwise wait for a writer, and
	// a hook must never hang. It changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	// Closing a file only read cannot lose data.
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("transcript %s: is a folder, not a file", path)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("transcript %s: not a regular file", path)
	}
	u, err := readTail(f, info.Size(), cfg, cl, defaultLimits)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	return u, nil
}

// limits sets the chunk and line sizes, so that tests can make them tiny, and how
// many bytes from the end are read at most (0: all of them).
type limits struct {
	firstChunk, maxChunk, maxLine int
	maxScan                       int64
}

var defaultLimits = limits{firstChunk: firstChunk, maxChunk: maxChunk, maxLine: maxLine}

// readTail computes usage from the size bytes of r, read backwards no further than
// cfg's MaxScanBytes.
func readTail(r io.ReaderAt, size int64, cfg Config, cl Client, lim limits) (*Usage, error) {
	lim.maxScan = cfg.scanBytes()
	f, err := scan(r, size, lim)
	if err != nil {
		return nil, err
	}
	if f.source == sourceUnknown {
		return nil, &UnknownError{Scanned: lim.maxScan}
	}
	return compute(f.tokens, f.reached, f.model, f.source, cfg, cl), nil
}

// finding is the line that decides the usage.
type finding struct {
	source  string
	tokens  int
	reached int // preTokens of a compaction: a hint at the window
	model   string
}

// sourceUnknown is the finding of a scan that stopped at lim.maxScan with no line that
// decides the usage.
const sourceUnknown = "unknown"

// scan walks the lines of r from the last to the first and returns the first that
// decides the usage. A line is judged only once it is whole: when the newline before it,
// or the start of the file, has been read. It reads no byte before size - lim.maxScan:
// the line cut there is not judged, and when nothing decided, the usage is unknown.
//
// State: the pending line ends at limit (a newline, or the end of the file), and the
// bytes read so far that belong to it are [off, limit), which hold no newline.
func scan(r io.ReaderAt, size int64, lim limits) (finding, error) {
	var (
		block, buf []byte
		base       int64 // file offset of block[0]
	)
	// lineAt returns the line [start, limit), from the current block when it lies there
	// and read again otherwise (its end was in bytes read earlier and since dropped), or
	// nil when it is empty or too long to hold.
	lineAt := func(start, limit int64) ([]byte, error) {
		length := limit - start
		switch {
		case length == 0 || length > int64(lim.maxLine):
			return nil, nil
		case start >= base && limit <= base+int64(len(block)):
			return block[start-base : limit-base], nil
		}
		if int64(cap(buf)) < length {
			// Grown ahead, so that a run of long lines does not allocate each time, and
			// let go of first, so that the old buffer can be collected meanwhile.
			size := min(max(length, 2*int64(cap(buf))), int64(lim.maxLine))
			buf = nil
			buf = make([]byte, size)
		}
		buf = buf[:length]
		if err := readFull(r, buf, start); err != nil {
			return nil, err
		}
		return buf, nil
	}

	floor := int64(0) // the first byte that may be read
	if lim.maxScan > 0 && size > lim.maxScan {
		floor = size - lim.maxScan
	}
	limit, off := size, size
	chunk := lim.firstChunk
	for off > floor {
		n := int(min(int64(chunk), off-floor))
		chunk = min(chunk*2, lim.maxChunk)
		block = resize(block, n)
		base = off - int64(n)
		if err := readFull(r, block, base); err != nil {
			return finding{}, err
		}
		off = base

		end := n
		for {
			i := bytes.LastIndexByte(block[:end], '\n')
			start := base + int64(i) + 1
			if i < 0 {
				if base > 0 {
					break
				}
				start = 0 // the first line of the file
			}
			line, err := lineAt(start, limit)
			if err != nil {
				return finding{}, err
			}
			if f, ok := judge(line); ok {
				return f, nil
			}
			if i < 0 {
				break
			}
			limit = start - 1
			end = i
		}
	}
	if floor > 0 {
		return finding{source: sourceUnknown}, nil
	}
	return finding{source: SourceNone}, nil
}

// judge reports whether line decides the usage, and how.
func judge(line []byte) (finding, bool) {
	if line == nil {
		return finding{}, false
	}
	maybe := bytes.Contains(line, markAssistant) || bytes.Contains(line, markCompact) ||
		escapesASCII(line)
	if !maybe {
		return finding{}, false
	}
	return decide(line)
}

// decide decodes line and reports whether it decides the usage, and how.
func decide(line []byte) (finding, bool) {
	var e entry
	if json.Unmarshal(line, &e) != nil {
		// Torn by a write in progress, or not ours: skipped, as the reader of a log must.
		return finding{}, false
	}
	switch {
	case e.Type == "system" && e.Subtype == "compact_boundary":
		f := finding{source: SourceCompactBoundary, reached: e.CompactMetadata.PreTokens}
		if e.CompactMetadata.PostTokens != nil {
			f.tokens = *e.CompactMetadata.PostTokens
		}
		return f, true
	case e.Type == "assistant" && !e.IsSidechain && !e.IsAPIErrorMessage &&
		e.Message.Model != syntheticModel && e.Message.Usage != nil:
		u := e.Message.Usage
		return finding{
			source: SourceAssistant,
			tokens: tokenSum(u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens),
			model:  e.Message.Model,
		}, true
	}
	return finding{}, false
}

// entry is the least of a transcript line that the usage needs.
type entry struct {
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	IsSidechain       bool   `json:"isSidechain"`
	IsAPIErrorMessage bool   `json:"isApiErrorMessage"`
	Message           struct {
		Model string `json:"model"`
		Usage *struct {
			InputTokens              int `json:"input_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	CompactMetadata struct {
		PreTokens  int  `json:"preTokens"`
		PostTokens *int `json:"postTokens"`
	} `json:"compactMetadata"`
}

// MaxTokens keeps a sum of hostile counts from overflowing, even in a 32-bit int (four
// counts of at most 2^28); no window comes near it (the largest are a few million).
const MaxTokens = 1 << 28

func tokenSum(counts ...int) int {
	sum := 0
	for _, c := range counts {
		sum += min(max(c, 0), MaxTokens)
	}
	return sum
}

// resize returns b with length n, reusing its memory when it is large enough.
func resize(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// readFull fills p from offset off; a file that shrank under the reader is an error.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read at %d: %w", off, err)
}
