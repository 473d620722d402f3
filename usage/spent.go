package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// What sessions cost, read from their transcripts the way the API bills it: input,
// cache writes, cache reads and output are four prices, so they are four counts, and
// each request counts once. Summing every request's context instead (input plus cache
// reads, request after request) counts the same cached prompt again at each turn.
//
// Claude Code writes one transcript line per content block of an answer, each with
// the request's usage: the same message id and request id, the same input and cache
// figures, and the output counted so far (2.1.38 transcripts hold lines of one message
// with 1 and then 412 output tokens). A request is counted once, with the largest
// output any of its lines gives.

// Tokens are a session's (or many sessions') tokens by price.
type Tokens struct {
	Input      int64 `json:"input"`
	CacheWrite int64 `json:"cache_write"`
	CacheRead  int64 `json:"cache_read"`
	Output     int64 `json:"output"`
}

// Add is t and o together.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{t.Input + o.Input, t.CacheWrite + o.CacheWrite, t.CacheRead + o.CacheRead, t.Output + o.Output}
}

// Total is all four counts together (they are billed at different prices).
func (t Tokens) Total() int64 { return t.Input + t.CacheWrite + t.CacheRead + t.Output }

// Brief is a token count as people read it: 950, 3.1k, 42k, 1.2M.
func Brief(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", (n+500_000)/1_000_000)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return strconv.FormatInt(n, 10)
}

// Parts is the four counts in words: "input 38 · cache writes 23k · cache reads 1.1M ·
// output 563".
func (t Tokens) Parts() string {
	return "input " + Brief(t.Input) + " · cache writes " + Brief(t.CacheWrite) + " · cache reads " + Brief(t.CacheRead) + " · output " + Brief(t.Output)
}

// Ledger reads what transcripts spent. A transcript only grows, so a read starts where
// the last one ended; one that shrank (replaced) is read again from the start. Safe
// for concurrent use.
type Ledger struct {
	mu    sync.Mutex
	files map[string]*ledgerFile
}

type ledgerFile struct {
	offset   int64 // the end of the last whole line read
	size     int64 // the file's size at the last read
	requests map[string]request
	days     map[string]Tokens // the requests summed by day, as Spent returns them
}

// request is one API request's counts and the local day it was made.
type request struct {
	day    string
	tokens Tokens
}

// Spent returns what the transcript at path spent, by local day ("2006-01-02"). A
// missing transcript spent nothing. The map is the ledger's: read it, do not change it.
func (l *Ledger) Spent(path string) (map[string]Tokens, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files = map[string]*ledgerFile{}
	}
	lf := l.files[path]
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		delete(l.files, path)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if lf != nil && fi.Size() == lf.size {
		return lf.days, nil // nothing new: a dashboard asks every two seconds
	}
	if lf == nil || fi.Size() < lf.offset {
		lf = &ledgerFile{requests: map[string]request{}}
		l.files[path] = lf
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if err := lf.read(f, fi.Size()); err != nil {
		return nil, err
	}
	lf.size = fi.Size()
	lf.days = map[string]Tokens{}
	for _, r := range lf.requests {
		lf.days[r.day] = lf.days[r.day].Add(r.tokens)
	}
	return lf.days, nil
}

// read reads the whole lines between the offset and size; a last line without its
// newline is still being written, and is read next time.
func (lf *ledgerFile) read(f *os.File, size int64) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, lf.offset, size-lf.offset), 256<<10)
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		lf.line(line[:len(line)-1], lf.offset)
		lf.offset += int64(len(line))
	}
}

// spentLine is what a transcript line holds of a request's spending.
type spentLine struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	Timestamp string `json:"timestamp"`
	Message   struct {
		ID    string `json:"id"`
		Usage *struct {
			Input      int64 `json:"input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			Output     int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// line counts one transcript line, found at offset (the key of a line that names no
// request).
func (lf *ledgerFile) line(b []byte, offset int64) {
	if !bytes.Contains(b, []byte(`"usage"`)) || !bytes.Contains(b, []byte(`"assistant"`)) {
		return
	}
	var l spentLine
	if json.Unmarshal(b, &l) != nil || l.Type != "assistant" || l.Message.Usage == nil {
		return
	}
	u := l.Message.Usage
	t := Tokens{Input: u.Input, CacheWrite: u.CacheWrite, CacheRead: u.CacheRead, Output: u.Output}
	key := l.Message.ID + "\x00" + l.RequestID
	if l.Message.ID == "" && l.RequestID == "" {
		key = "@" + strconv.FormatInt(offset, 10)
	}
	day := ""
	if at, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
		day = at.Local().Format(time.DateOnly)
	}
	if prev, ok := lf.requests[key]; ok {
		prev.tokens.Output = max(prev.tokens.Output, t.Output)
		lf.requests[key] = prev
		return
	}
	lf.requests[key] = request{day: day, tokens: t}
}
