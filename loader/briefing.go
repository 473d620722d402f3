package loader

import (
	"fmt"
	"strings"
)

// BriefingBytes bounds the briefing a hook injects into the agent's context: about
// 2,000 tokens at four bytes a token.
const BriefingBytes = 8000

// Briefing is the short text a SessionStart hook injects after a compaction or a
// resume: where work stopped and what to read, never whole files. It is cut at a line
// boundary to stay within maxBytes.
func Briefing(r *Result, maxBytes int) string {
	p, rs := r.Project, r.Resume
	var b strings.Builder
	fmt.Fprintf(&b, "ctx: you are working on project %s (%s)", p.ID, p.Name)
	if p.Progress.TasksTotal > 0 {
		fmt.Fprintf(&b, ", %d/%d tasks done (%d%%)", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	}
	b.WriteString(".\n")
	line := func(label, value string) {
		if value = strings.TrimSpace(value); value != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, oneLineText(value))
		}
	}
	if rs.Exists {
		line("Save point", rs.Path+" (updated "+rs.LastUpdated+")")
		line("Work stopped at", rs.LastSession)
		line("Current phase", rs.CurrentPhase)
		line("Next action", rs.NextAction)
	} else {
		line("Save point", "none yet")
	}
	if len(r.LastActions) > 0 {
		b.WriteString("Last actions:\n")
		for _, a := range r.LastActions {
			fmt.Fprintf(&b, "- %s\n", oneLineText(a))
		}
	}
	if len(r.PendingTasks) > 0 {
		b.WriteString("Pending tasks:\n")
		for _, t := range r.PendingTasks[:min(3, len(r.PendingTasks))] {
			fmt.Fprintf(&b, "- Task %d: %s\n", t.Number, oneLineText(t.Text))
		}
	}
	if len(r.RecommendedReads) > 0 {
		b.WriteString("Read first, in order:\n")
		for _, rd := range r.RecommendedReads[:min(6, len(r.RecommendedReads))] {
			if rd.Exists {
				fmt.Fprintf(&b, "- %s\n", rd.Path)
			}
		}
	}
	fmt.Fprintf(&b, "For the full picture run `ctx --resume --project %s --json`; save with `ctx save --summary \"...\" --next \"...\"`.\n", p.ID)
	return cutLines(b.String(), maxBytes)
}

func oneLineText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // never split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// cutLines keeps whole lines of s up to maxBytes.
func cutLines(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := strings.LastIndexByte(s[:maxBytes], '\n')
	if cut < 0 {
		return ""
	}
	return s[:cut+1]
}
