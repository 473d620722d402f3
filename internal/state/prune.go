package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// PruneOptions says which snapshot sets Prune removes: those outside the newest Keep
// (when KeepSet) and older than OlderThan (when it is above zero). Both given, a set
// must be outside both to go.
type PruneOptions struct {
	Keep      int
	KeepSet   bool
	OlderThan time.Duration
	Now       time.Time
	DryRun    bool
}

// PrunedSet is one snapshot set Prune removed (or would remove): its id, when it was
// saved (from its stamp) and every file of it, incremental journals included.
type PrunedSet struct {
	ID      string    `json:"id"`
	SavedAt time.Time `json:"saved_at"`
	Files   []string  `json:"files"`
}

// setFile matches the files of a snapshot set: session-<stamp>[-n].json|.yaml|.md and
// its archived journals session-<stamp>[-n]-incremental[-m].jsonl.
var setFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(session-\d{8}T\d{6}Z-\d{6}(?:-\d+)?)(?:\.json|\.yaml|\.md|` + archiveSuffix + `(?:-\d+)?\` + journalSuffix + `)$`)
})

// Prune removes old snapshot sets, every file of each, under the lock every snapshot
// write takes. The set LatestFile names is never removed, nor is an open
// ACTIVE-PAUSE journal (it belongs to no set). It returns the sets removed, oldest
// first, and how many sets remain. DryRun removes nothing and returns the same.
func (s Snapshots) Prune(opts PruneOptions) (pruned []PrunedSet, kept int, err error) {
	if !opts.KeepSet && opts.OlderThan <= 0 {
		return nil, 0, errors.New("prune: say which sets to remove: a number to keep, or an age")
	}
	if opts.KeepSet && opts.Keep < 0 {
		return nil, 0, fmt.Errorf("prune: keep %d: must be 0 or more", opts.Keep)
	}
	// A sessions folder that a link takes out of the workspace is not ctx's to read,
	// let alone empty; nor is a LatestFile that leads out, whose lock prune would take.
	if err := checkReadable(s.Dir); err != nil {
		return nil, 0, fmt.Errorf("prune: %w", err)
	}
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err := durable.CheckInside(filepath.Join(s.Dir, LatestFile)); err != nil {
		return nil, 0, fmt.Errorf("prune: %w", err)
	}
	locks, err := lockDir(s.Dir)
	if err != nil {
		return nil, 0, fmt.Errorf("prune: %w", err)
	}
	err = durable.WithLockIn(context.Background(), locks, filepath.Join(s.Dir, LatestFile), func() error {
		if !opts.DryRun {
			s.tidyLocked() // what killed writers left, marker or not
		}
		pruned, kept, err = s.prune(opts)
		return err
	})
	return pruned, kept, err
}

func (s Snapshots) prune(opts PruneOptions) ([]PrunedSet, int, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, 0, fmt.Errorf("prune: %w", err)
	}
	files := map[string][]string{}
	for _, e := range entries {
		if m := setFile().FindStringSubmatch(e.Name()); m != nil && e.Type().IsRegular() {
			files[m[1]] = append(files[m[1]], e.Name())
		}
	}
	ids := make([]string, 0, len(files))
	for id := range files {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareIDs) // newest first
	latest, _ := s.LatestID()
	cutoff := opts.Now.Add(-opts.OlderThan)

	var pruned []PrunedSet
	for i, id := range ids {
		// setFile guarantees the stamp's layout.
		stampText, _ := idKey(id)
		saved, err := time.Parse(stampLayout, stampText[:len(stampLayout)])
		if err != nil || id == latest {
			continue
		}
		if opts.KeepSet && i < opts.Keep {
			continue
		}
		if opts.OlderThan > 0 && !saved.Before(cutoff) {
			continue
		}
		set := PrunedSet{ID: id, SavedAt: saved, Files: files[id]}
		slices.Sort(set.Files)
		pruned = append(pruned, set)
	}
	slices.Reverse(pruned)
	if !opts.DryRun {
		var errs []error
		for _, set := range pruned {
			for _, name := range set.Files {
				if err := os.Remove(filepath.Join(s.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return pruned, len(ids) - len(pruned), fmt.Errorf("prune: %w", err)
		}
	}
	return pruned, len(ids) - len(pruned), nil
}
