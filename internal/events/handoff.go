package events

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

// A handoff continues a session's work in a fresh context that starts from a note
// rather than from a compaction's summary: an agent's handoff (ctx agents), or a
// person's /clear. The note is built from what ctx knows, without the agent's help.

// TriggerHandoff is the snapshot trigger of the save a handoff makes.
const TriggerHandoff state.Trigger = "handoff"

// NoteBytes bounds a handoff note: about 2,000 tokens at four bytes a token. What does
// not fit is behind the file references the note ends with.
const NoteBytes = loader.BriefingBytes

// NoteFirstLine begins every handoff note: the fresh session's first request carries
// it, which is how ctx checks that the note arrived.
const NoteFirstLine = "ctx: handoff note."

// Handoff is what a note is made from.
type Handoff struct {
	From    string // the session whose work continues
	Why     string // one clause: "its context reached 90%", "a /clear"
	Journal string // the finalized journal of From, workspace-relative ("" when none)
	Now     time.Time
}

// HandoffNote is the note a fresh session starts from: the agent's own last note
// (its newest `ctx save`), decisions and blockers it recorded, the files it changed and
// its last actions (from the journal), then the project's briefing (phase, next task,
// pending tasks, the reads in order), within NoteBytes.
func HandoffNote(st *state.Store, h Handoff) string {
	head := fmt.Sprintf("%s This is a fresh session continuing the work of session %s (%s). Carry on from this note: do not redo what it says is done.\n", NoteFirstLine, h.From, h.Why)
	var mid strings.Builder
	se := st.Session(h.From)
	if s, err := se.Saves(); err == nil && s.Count > 0 {
		fmt.Fprintf(&mid, "The last session's own note (its ctx save at %s):\n", s.At.Local().Format("15:04"))
		item := func(label, text string) {
			if text != "" {
				fmt.Fprintf(&mid, "- %s: %s\n", label, clip(state.OneLine(text), noteLine))
			}
		}
		item("Done", s.Summary)
		item("Next", s.Next)
		for _, d := range newestOf(s.Decisions, noteItems) {
			item("Decision", d)
		}
		for _, bl := range newestOf(s.Blockers, noteItems) {
			item("Blocker", bl)
		}
	}
	var savedAt time.Time
	brief := ""
	if binding, err := se.Binding(); err == nil && binding != nil {
		if p, err := st.WS.Resolve(binding.Path); err == nil {
			result := st.WS.Load(p, loader.LoadOptions{})
			savedAt, _ = time.Parse(time.RFC3339, result.Resume.LastUpdated)
			// The project's part keeps its room whatever the session's part holds.
			brief = loader.Briefing(result, NoteBytes/2)
		}
	}
	recap := SessionRecap(st, h.From, false)
	recap.Handoff = true
	mid.WriteString(recap.Text(savedAt))
	refs := ""
	if h.Journal != "" {
		refs = fmt.Sprintf("The last session's whole journal: %s.\n", h.Journal)
	}
	return head + cutNote(mid.String(), NoteBytes-len(head)-len(brief)-len(refs)) + brief + refs
}

// What a note keeps of a session's saves: the newest decisions and blockers, each
// line clipped.
const (
	noteItems = 5
	noteLine  = 300
)

func newestOf(list []string, n int) []string { return list[max(0, len(list)-n):] }

// clip shortens s to n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// cutNote keeps whole lines of s within n bytes.
func cutNote(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if cut := strings.LastIndexByte(s[:n], '\n'); cut >= 0 {
		return s[:cut+1]
	}
	return ""
}

// clearNote is what a session gets after /clear: the handoff note of the session it
// clears (its binding names it), else the project's briefing.
func clearNote(st *state.Store, in Start) (string, error) {
	b, err := st.Session(in.SessionID).Binding()
	if err != nil || b == nil || b.From == "" {
		return briefing(st, in)
	}
	return HandoffNote(st, Handoff{From: b.From, Why: "the person typed /clear", Now: in.Now}), nil
}
