package usage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Boundary is one compaction as the transcript records it: a system line with subtype
// compact_boundary, written after the summary. A microcompact_boundary (old tool
// results cleared) is not one: it only makes usage drop.
type Boundary struct {
	UUID       string
	Time       time.Time
	Trigger    string // "auto" or "manual"
	PreTokens  int
	PostTokens int // 0 when the line does not say (older clients)
}

// boundaryScan bounds how much of a transcript's end Boundaries reads: a compaction's
// boundary is followed by its summary and a few turns, never by megabytes, before a
// hook looks; a longer stretch is older history.
const boundaryScan = 4 << 20

// Boundaries returns the compactions recorded in the transcript at path from byte
// offset from to its end, oldest first, and the offset just past the last whole line
// read, where the next call may start. A negative from, or one past the end (the file
// was replaced), reads the last 4 MB; so does a from further back than that. A line
// being written (no newline yet) is left for the next call. A missing file is an error
// wrapping os.ErrNotExist.
func Boundaries(path string, from int64) ([]Boundary, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("transcript: %w", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("transcript: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("transcript %s: not a regular file", path)
	}
	size := info.Size()
	start := from
	if start < 0 || start > size || size-start > boundaryScan {
		start = max(0, size-boundaryScan)
	}
	if start == size {
		return nil, size, nil
	}
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, from, fmt.Errorf("transcript %s: %w", path, err)
	}
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		return nil, start, nil
	}
	var out []Boundary
	for line := range bytes.Lines(buf[:last+1]) {
		// The markers of read.go: only such a line can be a compaction's boundary.
		if !bytes.Contains(line, markCompact) && !escapesASCII(line) {
			continue
		}
		if b, ok := parseBoundary(line); ok {
			out = append(out, b)
		}
	}
	return out, start + int64(last) + 1, nil
}

// parseBoundary decodes one transcript line; ok is false unless it is a compaction's
// boundary on the main chain. The first line of a read that began mid-line is a
// fragment, which does not decode and is skipped.
func parseBoundary(line []byte) (Boundary, bool) {
	var e struct {
		Type            string `json:"type"`
		Subtype         string `json:"subtype"`
		UUID            string `json:"uuid"`
		Timestamp       string `json:"timestamp"`
		IsSidechain     bool   `json:"isSidechain"`
		CompactMetadata struct {
			Trigger    string `json:"trigger"`
			PreTokens  int    `json:"preTokens"`
			PostTokens int    `json:"postTokens"`
		} `json:"compactMetadata"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "system" || e.Subtype != "compact_boundary" || e.IsSidechain {
		return Boundary{}, false
	}
	t, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
	return Boundary{
		UUID: e.UUID, Time: t, Trigger: e.CompactMetadata.Trigger,
		PreTokens: e.CompactMetadata.PreTokens, PostTokens: max(e.CompactMetadata.PostTokens, 0),
	}, true
}
