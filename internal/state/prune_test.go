package state

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPrune(t *testing.T) {
	set := func(id string, extra ...string) []string {
		return append([]string{id + ".json", id + ".yaml", id + ".md"}, extra...)
	}
	old1 := "session-20261101T100000Z-000000"
	old2 := "session-20261101T100000Z-000000-2"
	mid := "session-20261110T100000Z-000000"
	latest := "session-20261105T100000Z-000000" // older than mid, but LATEST names it
	newest := "session-20261120T100000Z-000000"
	orphan := "session-20261102T100000Z-000000" // a minimal finalize: archive only
	layout := [][]string{
		set(old1, old1+"-incremental.jsonl", old1+"-incremental-2.jsonl"),
		set(old2),
		set(mid),
		set(latest),
		set(newest),
		{orphan + "-incremental.jsonl"},
		{"ACTIVE-PAUSE-s1.jsonl", "notes.txt"},
	}
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		opts PruneOptions
		want []string // ids removed, oldest first
		kept int
	}{
		{"keep 2", PruneOptions{Keep: 2, KeepSet: true}, []string{old1, old2, orphan}, 3},
		{"keep 0", PruneOptions{Keep: 0, KeepSet: true}, []string{old1, old2, orphan, mid, newest}, 1},
		{"older than 15 days", PruneOptions{OlderThan: 15 * 24 * time.Hour}, []string{old1, old2, orphan}, 3},
		{"both", PruneOptions{Keep: 4, KeepSet: true, OlderThan: 15 * 24 * time.Hour}, []string{old1, old2}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSnapshots(t)
			if err := os.MkdirAll(s.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, files := range layout {
				for _, f := range files {
					if err := os.WriteFile(filepath.Join(s.Dir, f), []byte("{}"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.WriteFile(filepath.Join(s.Dir, LatestFile), []byte(latest+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadDir(s.Dir)
			tt.opts.Now, tt.opts.DryRun = now, true
			pruned, kept, err := s.Prune(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadDir(s.Dir); len(after) != len(before) {
				t.Fatal("a dry run removed files")
			}
			var ids []string
			for _, p := range pruned {
				ids = append(ids, p.ID)
			}
			if !slices.Equal(ids, tt.want) || kept != tt.kept {
				t.Fatalf("pruned %v kept %d, want %v kept %d", ids, kept, tt.want, tt.kept)
			}

			tt.opts.DryRun = false
			if _, _, err := s.Prune(tt.opts); err != nil {
				t.Fatal(err)
			}
			for _, p := range pruned {
				for _, f := range p.Files {
					if _, err := os.Stat(filepath.Join(s.Dir, f)); !os.IsNotExist(err) {
						t.Errorf("%s left: %v", f, err)
					}
				}
			}
			for _, f := range append(set(latest), "ACTIVE-PAUSE-s1.jsonl", "notes.txt", LatestFile) {
				if _, err := os.Stat(filepath.Join(s.Dir, f)); err != nil {
					t.Errorf("%s removed: %v", f, err)
				}
			}
			if p, _, _ := s.Prune(tt.opts); len(p) != 0 {
				t.Errorf("second prune removed %d sets", len(p))
			}
		})
	}
	if _, _, err := newSnapshots(t).Prune(PruneOptions{}); err == nil {
		t.Error("Prune with no limits did not fail")
	}
}
