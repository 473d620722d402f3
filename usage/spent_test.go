package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func assistantLine(id, req string, at time.Time, in, write, read, out int64) string {
	return fmt.Sprintf(`{"type":"assistant","requestId":%q,"timestamp":%q,"message":{"id":%q,"role":"assistant","usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}}}`+"\n",
		req, at.UTC().Format(time.RFC3339Nano), id, in, write, read, out)
}

// A request counts once, with its largest output; four prices, four counts; days by
// the local date; a transcript read as it grows (a line cut mid-write waits for its
// end), and read again when it was replaced.
func TestLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	today := time.Date(2026, 11, 26, 12, 0, 0, 0, time.Local)
	yesterday := today.AddDate(0, 0, -1)
	first := assistantLine("msg_1", "req_1", yesterday, 3, 1000, 5000, 1) + // the first block of an answer
		assistantLine("msg_1", "req_1", yesterday, 3, 1000, 5000, 412) + // its last block: the final output
		`{"type":"user","message":{"role":"user","content":"usage"}}` + "\n"
	second := assistantLine("msg_2", "req_2", today, 2, 50, 6000, 30)
	if err := os.WriteFile(path, []byte(first+second[:40]), 0o644); err != nil {
		t.Fatal(err)
	}
	var l Ledger
	got, err := l.Spent(path)
	if err != nil {
		t.Fatal(err)
	}
	day := func(at time.Time) string { return at.Format(time.DateOnly) }
	if want := (Tokens{3, 1000, 5000, 412}); got[day(yesterday)] != want || len(got) != 1 {
		t.Errorf("first read: %+v, want %s: %+v", got, day(yesterday), want)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(second[40:])
	_ = f.Close()
	got, _ = l.Spent(path)
	if want := (Tokens{2, 50, 6000, 30}); got[day(today)] != want || got[day(yesterday)].Output != 412 {
		t.Errorf("after the append: %+v", got)
	}
	// Replaced by a shorter file: read again from the start.
	if err := os.WriteFile(path, []byte(second), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ = l.Spent(path); len(got) != 1 || got[day(today)].Total() != 2+50+6000+30 {
		t.Errorf("after a replacement: %+v", got)
	}
	if got, err := l.Spent(filepath.Join(t.TempDir(), "none.jsonl")); err != nil || len(got) != 0 {
		t.Errorf("a missing transcript: %+v %v", got, err)
	}
}
