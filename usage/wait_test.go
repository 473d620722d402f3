package usage

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWaitForLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"user"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if WaitForLine(path, []byte(`"toolu_1"`), 30*time.Millisecond) {
		t.Fatal("found a line that is not there")
	}
	go func() {
		time.Sleep(40 * time.Millisecond)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		_, _ = f.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1"}]}}` + "\n")
		_ = f.Close()
	}()
	if !WaitForLine(path, []byte(`"toolu_1"`), 2*time.Second) {
		t.Fatal("did not see the line written later")
	}
	if WaitForLine(filepath.Join(t.TempDir(), "missing"), []byte("x"), 0) {
		t.Fatal("a missing file holds nothing")
	}
	if !WaitForLine(path, nil, 0) {
		t.Fatal("no marker means nothing to wait for")
	}
}
