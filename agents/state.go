package agents

import "fmt"

// State is an agent's lifecycle state (AGENTS.md §5.4).
type State string

// The lifecycle states.
const (
	Starting State = "starting"
	Active   State = "active"
	Pausing  State = "pausing"
	Paused   State = "paused"
	Resuming State = "resuming"
	// HandingOff: the session is ending for a fresh one that continues the work
	// (handoff.go).
	HandingOff State = "handing-off"
	Exited     State = "exited"
	Lost       State = "lost"
	Failed     State = "failed"
)

// Events move an agent from one state to another.
type Event string

// The lifecycle events.
const (
	EvStarted     Event = "session-start" // SessionStart seen for the agent's session
	EvPause       Event = "pause"
	EvPaused      Event = "paused"
	EvResume      Event = "resume"
	EvHandoff     Event = "handoff"
	EvSend        Event = "send" // text or keys typed into the session: no transition
	EvPaneDied    Event = "pane-died"
	EvHostMissing Event = "host-missing"
	EvLaunchDied  Event = "launch-died" // the process died before SessionStart
	EvRollback    Event = "rollback"    // an operation undone: back where it was
)

// transitions is the whole state machine: from a state, an event leads to a state. A
// pair missing here is refused.
var transitions = map[State]map[Event]State{
	Starting: {EvStarted: Active, EvLaunchDied: Failed, EvHostMissing: Lost, EvPaneDied: Failed},
	Active:   {EvPause: Pausing, EvHandoff: HandingOff, EvPaneDied: Exited, EvHostMissing: Lost},
	Pausing:  {EvPaused: Paused, EvRollback: Active},
	Paused:   {EvResume: Resuming},
	Exited:   {EvResume: Resuming},
	Lost:     {EvResume: Resuming},
	Failed:   {EvResume: Resuming},
	Resuming: {EvStarted: Active, EvLaunchDied: Failed, EvPaneDied: Failed, EvHostMissing: Failed},
	// A handoff undone goes back to the old session (EvRollback); a fresh session that
	// never starts fails like a resume's.
	HandingOff: {EvStarted: Active, EvRollback: Active, EvLaunchDied: Failed, EvPaneDied: Failed, EvHostMissing: Failed},
}

// Next is the state an event leads to from s, or an error naming why not.
func Next(s State, e Event) (State, error) {
	if to, ok := transitions[s][e]; ok {
		return to, nil
	}
	return s, &StateError{From: s, Event: e}
}

// StateError is an operation the agent's state does not allow now.
type StateError struct {
	From  State
	Event Event
}

func (e *StateError) Error() string {
	switch e.Event {
	case EvPause:
		return fmt.Sprintf("agent is %s, not active: nothing to pause", e.From)
	case EvResume:
		return fmt.Sprintf("agent is %s: only a paused, exited, lost or failed agent can be resumed", e.From)
	case EvHandoff:
		return fmt.Sprintf("agent is %s, not active: nothing to hand off", e.From)
	case EvSend:
		return fmt.Sprintf("agent is %s, not active: nothing to type into (resume it first)", e.From)
	}
	return fmt.Sprintf("agent is %s: %s does not apply", e.From, e.Event)
}

// Running reports whether the state has a claude process that should be alive.
func (s State) Running() bool {
	return s == Starting || s == Active || s == Resuming || s == Pausing || s == HandingOff
}

// Resumable reports whether resume applies.
func (s State) Resumable() bool { return s == Paused || s == Exited || s == Lost || s == Failed }
