package usage

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBoundariesFindsCompactionsNotMicrocompactions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	lines := `{"type":"assistant","message":{"usage":{"input_tokens":5}},"uuid":"a1"}
{"type":"system","subtype":"compact_boundary","uuid":"b1","timestamp":"2026-11-20T10:00:00.000Z","compactMetadata":{"trigger":"auto","preTokens":970095,"postTokens":3113}}
{"type": "system", "subtype": "microcompact_boundary", "uuid": "m1", "timestamp": "2026-11-20T10:01:00.000Z"}
{"type": "system", "subtype": "compact_boundary", "uuid": "b2", "timestamp": "2026-11-20T10:02:00.000Z", "compactMetadata": {"trigger": "manual", "preTokens": 167094}}
{"type":"system","subtype":"compact_boundary","isSidechain":true,"uuid":"s1","timestamp":"2026-11-20T10:03:00.000Z"}
{"type":"system","subtype":"compact_boundary","uuid":"torn"`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	got, end, err := Boundaries(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UUID != "b1" || got[0].PostTokens != 3113 || got[0].PreTokens != 970095 ||
		got[1].UUID != "b2" || got[1].Trigger != "manual" || got[1].PostTokens != 0 || got[1].Time.Minute() != 2 {
		t.Fatalf("boundaries = %+v", got)
	}
	info, _ := os.Stat(path)
	if torn := int64(len(`{"type":"system","subtype":"compact_boundary","uuid":"torn"`)); end != info.Size()-torn {
		t.Errorf("end = %d, want %d (before the torn line)", end, info.Size()-torn)
	}
	// From where the last read stopped: nothing new until the torn line is whole.
	if again, end2, _ := Boundaries(path, end); len(again) != 0 || end2 != end {
		t.Errorf("second read = %+v, %d", again, end2)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`,"timestamp":"2026-11-20T10:04:00Z"}` + "\n")
	_ = f.Close()
	if again, _, _ := Boundaries(path, end); len(again) != 1 || again[0].UUID != "torn" {
		t.Errorf("after the line was finished = %+v", again)
	}
	if _, _, err := Boundaries(filepath.Join(t.TempDir(), "none"), 0); !os.IsNotExist(err) && err == nil {
		t.Errorf("missing file: %v", err)
	}
}

// A compaction line whose subtype is written with a \u escape is one all the same, as
// encoding/json reads it.
func TestBoundariesFindsEscapedCompactions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	lines := `{"type":"system","subtype":"compact_bound\u0061ry","uuid":"b1","compactMetadata":{"trigger":"auto","preTokens":9}}
{"type": "system", "subtype": "\u0063ompact_boundary", "uuid": "b2"}
{"type":"user","message":{"content":"{\"subtype\":\"\\u0063ompact_boundary\"}"},"uuid":"u1"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := Boundaries(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UUID != "b1" || got[0].PreTokens != 9 || got[1].UUID != "b2" {
		t.Fatalf("boundaries = %+v, want b1 and b2", got)
	}
}
