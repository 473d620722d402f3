//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// A payload written in pieces, with pauses, is read whole once the writer closes.
func TestReadFileWithinPieces(t *testing.T) {
	r, w := pipe(t)
	go func() {
		for _, piece := range []string{`{"session_id":`, `"s1",`, `"x":1}`} {
			_, _ = w.WriteString(piece)
			time.Sleep(20 * time.Millisecond)
		}
		_ = w.Close()
	}()
	data, handled, err := readFileWithin(r, 1<<20, 2*time.Second)
	if !handled || err != nil || string(data) != `{"session_id":"s1","x":1}` {
		t.Fatalf("got %q, handled %v, err %v", data, handled, err)
	}
}

// A writer that never closes costs the wait and gives nothing, as a stalled stdin must.
func TestReadFileWithinNeverClosed(t *testing.T) {
	r, w := pipe(t)
	_, _ = w.WriteString(`{"session_id":"s1"`)
	start := time.Now()
	data, handled, err := readFileWithin(r, 1<<20, 150*time.Millisecond)
	took := time.Since(start)
	if !handled || err != nil || data != nil {
		t.Fatalf("got %q, handled %v, err %v", data, handled, err)
	}
	if took < 150*time.Millisecond || took > 2*time.Second {
		t.Errorf("gave up after %v, want the wait of 150ms", took)
	}
}

// A payload over the limit is cut there, and the rest is read and dropped so the
// writer is never left blocked on a full pipe.
func TestReadFileWithinOverLimit(t *testing.T) {
	r, w := pipe(t)
	big := bytes.Repeat([]byte("x"), 1<<20) // far more than a pipe holds
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Write(big)
		_ = w.Close()
		wrote <- err
	}()
	data, handled, err := readFileWithin(r, 1000, 5*time.Second)
	if !handled || err != nil || len(data) != 1000 {
		t.Fatalf("got %d bytes, handled %v, err %v", len(data), handled, err)
	}
	select {
	case err := <-wrote:
		if err != nil {
			t.Errorf("writer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the writer is still blocked")
	}
}

// A payload redirected from a file is read as from a pipe.
func TestReadFileWithinRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(path, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	data, handled, err := readFileWithin(f, 1<<20, time.Second)
	if !handled || err != nil || string(data) != `{"a":1}` {
		t.Fatalf("got %q, handled %v, err %v", data, handled, err)
	}
}
