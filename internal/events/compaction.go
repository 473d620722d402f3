package events

import (
	"context"
	"errors"
	"time"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/usage"
)

// The signals of a compaction. Claude Code 2.1.330 sends, in order: PreCompact, the
// transcript's compact_boundary line, PostCompact, SessionStart with source compact;
// older versions and other paths send only some of them.
const (
	SignalPreCompact   = "pre-compact"
	SignalPostCompact  = "post-compact"
	SignalSessionStart = "session-start"
	SignalTranscript   = "transcript"
)

// compactionSlack absorbs the time between a compaction's boundary line and the hook
// that counted it: the line is written, then PostCompact and SessionStart run.
const compactionSlack = 5 * time.Second

// Compaction is one signal that the session's context was compacted.
type Compaction struct {
	SessionID      string
	TranscriptPath string
	Signal         string
	PromptID       string // the payload's prompt_id; "" when it has none
	Trigger        string // auto or manual, when the signal says
	Client         usage.Client
	Now            time.Time
}

// OnCompaction counts a compaction once, whichever of its signals comes first: that
// one starts a new cycle, counts the compaction in the bound project's save point (an
// auto-save when none happened in the cycle), and finalizes the journal. The others
// find the compaction already counted, by its prompt id or its boundary line, and do
// nothing. It reports whether this signal counted.
func OnCompaction(st *state.Store, in Compaction) (bool, error) {
	var newest *usage.Boundary
	if in.TranscriptPath != "" && in.Signal != SignalPreCompact {
		// PreCompact comes before the line is written: the newest one is an older
		// compaction's.
		if bs, _, err := usage.Boundaries(in.TranscriptPath, -1); err == nil && len(bs) > 0 {
			newest = &bs[len(bs)-1]
		}
	}
	return countCompaction(st, in, newest)
}

// checkBoundaries looks for compact_boundary lines written since the last look and
// counts each compaction no hook counted: the signal of last resort, for clients and
// paths without compaction hooks. It returns where the search got to.
func checkBoundaries(st *state.Store, in UsageCheck) (int64, error) {
	c, err := st.Session(in.SessionID).Cycle()
	if err != nil {
		return 0, err
	}
	from := int64(-1)
	if c.TranscriptPath == in.TranscriptPath && c.ScannedTo > 0 {
		from = c.ScannedTo
	}
	bs, end, err := usage.Boundaries(in.TranscriptPath, from)
	if err != nil {
		return c.ScannedTo, err
	}
	var errs []error
	for i := range bs {
		_, err := countCompaction(st, Compaction{
			SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Signal: SignalTranscript,
			Trigger: bs[i].Trigger, Client: in.Client, Now: in.Now,
		}, &bs[i])
		errs = append(errs, err)
	}
	return end, errors.Join(errs...)
}

// countCompaction decides under the cycle's lock whether the signal reports a
// compaction not counted yet, records what identifies it, and when it is new does the
// compaction's work.
func countCompaction(st *state.Store, in Compaction, b *usage.Boundary) (bool, error) {
	isNew, wasSaved := false, false
	_, err := st.Session(in.SessionID).UpdateCycle(func(c *state.Cycle) error {
		start := c.Began()
		if start.IsZero() {
			start = in.Now // a session ctx never saw: its history is not this cycle's
		}
		if m := sameCompaction(c, in, b, start); m != nil {
			// Known: fill in what this signal adds to its identity.
			if m.PromptID == "" {
				m.PromptID = in.PromptID
			}
			if m.Boundary == "" && b != nil && !b.Time.Before(m.At.Add(-compactionSlack)) {
				m.Boundary = b.UUID
			}
			return nil
		}
		if in.Signal == SignalTranscript && (b == nil || !b.Time.After(start)) {
			isNew = false // an older compaction, from before this cycle
			return nil
		}
		isNew, wasSaved = true, c.AutoSaved
		mark := &state.CompactionMark{PromptID: in.PromptID, Signal: in.Signal, At: in.Now.UTC()}
		if b != nil && b.Time.After(start) {
			mark.Boundary = b.UUID
		}
		c.Number++
		c.Warned, c.AutoSaved, c.Held = false, false, nil
		c.Compaction, c.StartedAt, c.UpdatedAt = mark, in.Now.UTC(), in.Now.UTC()
		if c.TranscriptPath == "" {
			c.TranscriptPath = in.TranscriptPath
		}
		return nil
	})
	if err != nil || !isNew {
		return false, err
	}
	return true, compactionWork(st, in, wasSaved)
}

// sameCompaction returns the cycle's compaction mark when the signal is about the
// compaction it names, else nil.
func sameCompaction(c *state.Cycle, in Compaction, b *usage.Boundary, start time.Time) *state.CompactionMark {
	m := c.Compaction
	if m == nil {
		return nil
	}
	if in.PromptID != "" && m.PromptID == in.PromptID {
		return m
	}
	if b != nil && m.Boundary != "" && b.UUID == m.Boundary {
		return m
	}
	switch in.Signal {
	case SignalPreCompact:
		// Nothing else identifies a PreCompact: its boundary does not exist yet.
		return nil
	case SignalTranscript:
		// A hook counted this cycle's compaction before its line was written: a
		// line newer than the cycle's start with no boundary recorded is that one.
		if b != nil && m.Boundary == "" && !b.Time.Before(start.Add(-compactionSlack)) {
			return m
		}
	default:
		// PostCompact or SessionStart without a prompt id, after a PreCompact without
		// one (a manual /compact): the same compaction if its line is not older than
		// the count.
		if in.PromptID == "" && m.PromptID == "" && m.Boundary == "" && in.Now.Sub(m.At) < time.Minute &&
			(b == nil || !b.Time.Before(m.At.Add(-compactionSlack))) {
			return m
		}
	}
	return nil
}

// compactionWork is what a counted compaction does: count it in the bound project's
// save point (with an auto-save when none happened in the cycle), note it in the
// journal, and finalize the journal.
func compactionWork(st *state.Store, in Compaction, autoSaved bool) error {
	var u *usage.Usage
	if in.TranscriptPath != "" {
		u, _ = ReadUsage(st, in.TranscriptPath, in.Client)
	}
	var errs []error
	if !autoSaved {
		_, err := AutoSave(st, in.SessionID, state.TriggerPreCompact, SnapshotUsage(u), 1, in.Now)
		errs = append(errs, err)
	} else {
		errs = append(errs, CountCompaction(st, in.SessionID, SnapshotUsage(u), in.Now))
	}
	j := st.Journal(in.SessionID)
	active, err := j.Active()
	errs = append(errs, err)
	if active {
		errs = append(errs, j.Append(in.Now, state.LineSystemEvent, percentOf(u), map[string]string{
			"event": "compaction", "trigger": in.Trigger, "signal": in.Signal,
		}))
		_, _, err := FinalizeJournal(context.Background(), st, in.SessionID, state.TriggerPreCompact, SnapshotUsage(u), false, in.Now)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
