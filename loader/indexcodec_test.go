package loader

import (
	"encoding/binary"
	"io/fs"
	"math"
	"reflect"
	"testing"

	"github.com/ctxtools/ctx/markdown"
)

func sampleIndex() *projectIndex {
	return &projectIndex{Version: indexVersion, Key: "/ws\x0002-projects\x00planning", Entries: map[string]indexEntry{
		"/ws/02-projects/01-a": {
			Stamps: []fileStamp{
				{Path: ".", ModTime: 1_700_000_000_123_456_789, Mode: fs.ModeDir | 0o755},
				{Path: "01-planning/steps.md", Size: 4096, ModTime: -5, Mode: 0o644, Link: true},
				{Path: "overview.md", Missing: true},
			},
			Name: "Alpha ✓", Status: "active", Description: "one\nline",
			Progress: markdown.Progress{TasksTotal: 30, TasksCompleted: 7, Percent: 23, CurrentTask: "write it",
				CurrentSection: "Phase 2", CurrentTaskNumber: 8, CurrentSectionNumber: 2},
			Problems: []string{"steps: 3: frontmatter: bad", ""},
			Overview: "overview.md", Plan: "01-planning/plan.md", Steps: "01-planning/steps.md", StepsProblem: "x",
		},
		"/ws/02-projects/02-b": {Stamps: []fileStamp{}, Problems: []string{}},
	}}
}

func TestIndexCodecRoundTrip(t *testing.T) {
	want := sampleIndex()
	got, err := decodeIndex(encodeIndex(want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

// Every cut of a good index, and every change of one byte, is refused, never read as
// another index.
func TestIndexCodecRefusesTruncation(t *testing.T) {
	data := encodeIndex(sampleIndex())
	for n := range len(data) {
		if _, err := decodeIndex(data[:n]); err == nil {
			t.Fatalf("an index cut at %d of %d bytes decoded", n, len(data))
		}
	}
	if _, err := decodeIndex(append(data, 0)); err == nil {
		t.Error("an index with a byte after its end decoded")
	}
	for i := range data {
		changed := append([]byte(nil), data...)
		changed[i] ^= 0x5a
		if _, err := decodeIndex(changed); err == nil {
			t.Fatalf("an index with byte %d of %d changed decoded", i, len(data))
		}
	}
}

// FuzzDecodeIndex: any bytes decode or are refused, without a panic or an allocation
// larger than the input warrants, and what decodes encodes back to the same index.
func FuzzDecodeIndex(f *testing.F) {
	f.Add(encodeIndex(sampleIndex()))
	f.Add([]byte(indexMagic + "\x04\x00\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := decodeIndex(data)
		if err != nil {
			return
		}
		again, err := decodeIndex(encodeIndex(idx))
		if err != nil || !reflect.DeepEqual(again, idx) {
			t.Fatalf("decoded index does not survive a round trip: %v", err)
		}
	})
}

// The decoder reads back every number encoding/binary writes, and refuses varints
// that overflow or never end.
func TestIndexDecoderVarints(t *testing.T) {
	for _, u := range []uint64{0, 1, 127, 128, 300, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		d := indexDecoder{rest: string(binary.AppendUvarint(nil, u))}
		if got := d.uint(); got != u || !d.done() {
			t.Errorf("uvarint %d: got %d, err %v, %d bytes left", u, got, d.err, len(d.rest))
		}
	}
	for _, n := range []int64{0, 1, -1, 63, -64, 64, math.MaxInt64, math.MinInt64} {
		d := indexDecoder{rest: string(binary.AppendVarint(nil, n))}
		if got := d.int(); got != n || !d.done() {
			t.Errorf("varint %d: got %d, err %v", n, got, d.err)
		}
	}
	for _, bad := range []string{"", "\x80", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"} {
		d := indexDecoder{rest: bad}
		if d.uint(); d.err == nil {
			t.Errorf("uvarint %q decoded", bad)
		}
	}
}
