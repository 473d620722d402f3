package state

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The Markdown rendering of a snapshot set (its .md file); the store is snapshot.go.

// Markdown renders the snapshot as a briefing that a person or an agent can read cold:
// which project, how far along, when and why it was saved, how full the context was,
// where work stopped, what is left, the state of the repository, and how to resume.
func (s *Snapshot) Markdown() []byte {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	if s.Project != nil {
		p("# Session snapshot: %s\n\n", OneLine(cmp.Or(s.Project.Name, s.Project.ID)))
	} else {
		p("# Session snapshot: workspace\n\n")
	}
	if s.SavedAt.IsZero() {
		p("Saved at an unrecorded time %s.\n\n", s.Trigger.describe())
	} else {
		p("Saved %s %s.\n\n", s.SavedAt.Format("2006-01-02 15:04:05 MST"), s.Trigger.describe())
	}

	if s.Project != nil {
		p("- **Project:** %s", code(s.Project.ID))
		if s.Project.Name != "" && s.Project.Name != s.Project.ID {
			p(" (%s)", OneLine(s.Project.Name))
		}
		if s.Project.Path != "" {
			p(" in %s", code(s.Project.Path))
		}
		p("\n")
		if progress := describeProgress(s.Project.Progress); progress != "" {
			p("- **Progress:** %s\n", progress)
		}
	} else {
		p("- **Project:** none bound; this snapshot is of the workspace\n")
	}
	if phase, ok := s.Resume["current_phase"].(string); ok && strings.TrimSpace(phase) != "" {
		p("- **Phase:** %s\n", OneLine(phase))
	}
	if u := s.ContextUsage; u != nil {
		p("- **Context usage:** %s of %s tokens (%.1f%%)\n", groupDigits(u.TokensUsed), groupDigits(u.TokensTotal), u.Percentage)
	} else {
		p("- **Context usage:** not known\n")
	}
	if s.SessionID != "" {
		p("- **Agent session:** %s\n", code(s.SessionID))
	}
	if s.ResumePath != "" {
		p("- **Save point:** %s\n", code(s.ResumePath))
	}
	if s.SnapshotID != "" {
		p("- **Snapshot:** %s (same data in .json and .yaml)\n", code(s.SnapshotID))
	}

	p("\n## Last action\n\n%s\n", paragraph(s.ResumePrompt.LastAction))
	p("\n## Current state\n\n%s\n", paragraph(s.ResumePrompt.CurrentState))
	p("\n## Pending tasks\n\n")
	if len(s.ResumePrompt.PendingTasks) == 0 {
		p("_None recorded._\n")
	}
	for _, task := range s.ResumePrompt.PendingTasks {
		p("- [ ] %s\n", OneLine(task))
	}

	if g := s.Git; g != nil {
		p("\n## Git\n\n")
		if g.Branch != "" {
			p("- **Branch:** %s\n", code(g.Branch))
		} else {
			p("- **Branch:** none (detached HEAD)\n")
		}
		if g.Head != "" {
			p("- **Head:** %s\n", code(g.Head))
		} else {
			p("- **Head:** no commits yet\n")
		}
		if len(g.Dirty) == 0 {
			p("- **Uncommitted changes:** none\n")
		} else {
			p("- **Uncommitted changes (%d):**\n", len(g.Dirty))
			for _, path := range g.Dirty[:min(len(g.Dirty), maxDirtyShown)] {
				p("  - %s\n", code(path))
			}
			if more := len(g.Dirty) - maxDirtyShown; more > 0 {
				p("  - … and %d more (see the .json file)\n", more)
			}
		}
	}

	if ip := s.IncrementalPause; len(ip) > 0 {
		p("\n## Wind-down journal\n\n")
		if n, ok := number(ip["action_count"]); ok {
			p("- **Actions recorded:** %s\n", n)
		}
		if d, ok := number(ip["duration_seconds"]); ok {
			p("- **Duration:** %s s\n", d)
		}
		p("- The last actions are in the .json file under `incremental_pause`.\n")
	}

	command := "ctx --resume"
	if s.Project != nil && s.Project.ID != "" {
		command += " --project " + s.Project.ID
	}
	p("\n## Resume\n\nTo pick the work up where it stopped, run:\n\n```sh\n%s\n```\n", command)
	return []byte(b.String())
}

// describeProgress renders a project's progress, whatever type the caller keeps it in,
// from its JSON names (markdown.Progress: tasks_completed, tasks_total, percent, ...).
func describeProgress(progress any) string {
	if progress == nil {
		return ""
	}
	data, err := json.Marshal(progress)
	if err != nil {
		return ""
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return OneLine(string(data))
	}
	done, okDone := number(m["tasks_completed"])
	total, okTotal := number(m["tasks_total"])
	if !okDone || !okTotal {
		return OneLine(string(data))
	}
	out := done + " of " + total + " tasks done"
	if pct, ok := number(firstNonNil(m["percent"], m["percentage"])); ok {
		out += " (" + pct + "%)"
	}
	if task, _ := m["current_task"].(string); task != "" {
		out += "; next: " + OneLine(task)
		if section, _ := m["current_section"].(string); section != "" {
			out += " (under " + OneLine(section) + ")"
		}
	}
	return out
}

func number(v any) (string, bool) {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64), true
	case int:
		return strconv.Itoa(n), true
	case int64:
		return strconv.FormatInt(n, 10), true
	case json.Number:
		return n.String(), true
	}
	return "", false
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// OneLine keeps a value on its list item or heading line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func paragraph(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return "_Not recorded._"
	}
	return s
}

// code renders s as a Markdown code span, with a fence longer than any run of
// backticks inside it.
func code(s string) string {
	s = OneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		// The spaces keep a backtick at either end from joining the fence.
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
