package state

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// A sessions folder that a link takes out of its workspace is read no more than it is
// written: every read of Snapshots and Journal, and the search for orphaned journals,
// refuses it with the *durable.OutsideError that names the folder, and reads nothing
// there.
func TestReadsRefuseASessionsFolderLinkedOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, ".ctx", "sessions")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// What is outside: a whole snapshot set, LatestFile and an open journal.
	real := Snapshots{Dir: outside}
	id := mustWrite(t, real, fullSnapshot())
	mustStart(t, OpenJournal(outside, "s1"))
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	durable.Confine(root)

	snaps, j := Snapshots{Dir: dir}, OpenJournal(dir, "s1")
	reads := map[string]func() error{
		"Snapshots.List":         func() error { _, err := snaps.List(); return err },
		"Snapshots.Read":         func() error { _, err := snaps.Read(id); return err },
		"Snapshots.Read(latest)": func() error { _, err := snaps.Read("latest"); return err },
		"Snapshots.LatestID":     func() error { _, err := snaps.LatestID(); return err },
		"Snapshots.Prune": func() error {
			_, _, err := snaps.Prune(PruneOptions{Keep: 0, KeepSet: true, DryRun: true, Now: time.Now()})
			return err
		},
		"Journal.Active":  func() error { _, err := j.Active(); return err },
		"Journal.Read":    func() error { _, _, err := j.Read(); return err },
		"Journal.Status":  func() error { _, err := j.Status(); return err },
		"Journal.Append":  func() error { return j.Append(time.Now(), LineToolCall, nil, nil) },
		"Journal.Discard": func() error { return j.Discard() },
		"Orphans":         func() error { _, err := Orphans(dir, ""); return err },
	}
	for name, read := range reads {
		var oe *durable.OutsideError
		if err := read(); !errors.As(err, &oe) || oe.Path != dir {
			t.Errorf("%s: got %v, want the sessions folder refused", name, err)
		}
	}
	if _, err := os.Stat(OpenJournal(outside, "s1").Path()); err != nil {
		t.Errorf("the journal outside is gone: %v", err)
	}

	durable.Confine(root, outside) // links.allow_outside
	if list, err := snaps.List(); err != nil || len(list) != 1 {
		t.Errorf("allowed: listed %d snapshots, %v", len(list), err)
	}
	if ok, err := j.Active(); !ok || err != nil {
		t.Errorf("allowed: journal active %v, %v", ok, err)
	}
}
