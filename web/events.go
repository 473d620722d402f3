package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/internal/screen"
	"github.com/ctxtools/ctx/internal/state"
)

// ringSize is how many events are kept for a client that reconnects with
// Last-Event-ID; one further behind gets a snapshot.
const ringSize = 1024

// subBuffer is how many events a slow client may have pending before it is dropped
// (its EventSource reconnects and catches up from the ring).
const subBuffer = 256

type event struct {
	seq    uint64 // 0 for screen events: not kept, not resumable
	name   string
	data   []byte
	screen string // the agent a screen event is for
}

type subscriber struct {
	ch      chan event
	screens map[string]bool // the agents whose screens this client watches
}

// screenState is the screen last sent for an agent: capture-pane's text, to see
// whether it changed, and the event a new watcher is sent first.
type screenState struct {
	raw  string
	data []byte
}

// hub holds the rows as last seen, the numbered events, and the clients of the
// event stream. Events are numbered per boot: an id from another boot cannot be
// resumed and gets a snapshot.
type hub struct {
	mu      sync.Mutex
	boot    string
	seq     uint64
	ring    []event
	rows    map[string]Row
	order   []string // ids, oldest first
	subs    map[*subscriber]struct{}
	screens map[string]screenState // the last screen sent per agent
	// notify, when set, hears of the events a person wants to be told of (an agent
	// needs input, exited, failed); it is called outside the hub's lock.
	notify func(event string, r Row, text string)
}

// notification is one call of hub.notify waiting for the lock to be released.
type notification struct {
	event, text string
	row         Row
}

func newHub(boot string) *hub {
	return &hub{boot: boot, rows: map[string]Row{}, subs: map[*subscriber]struct{}{}, screens: map[string]screenState{}}
}

func (h *hub) id(seq uint64) string { return h.boot + "-" + strconv.FormatUint(seq, 10) }

// publishLocked numbers an event, keeps it and hands it to every client.
func (h *hub) publishLocked(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	h.seq++
	ev := event{seq: h.seq, name: name, data: b}
	h.ring = append(h.ring, ev)
	if len(h.ring) > ringSize {
		h.ring = h.ring[len(h.ring)-ringSize:]
	}
	for s := range h.subs {
		h.sendLocked(s, ev)
	}
}

func (h *hub) publish(name string, data any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.publishLocked(name, data)
}

// sendLocked delivers without ever blocking the hub: a client that cannot keep up is
// dropped and reconnects.
func (h *hub) sendLocked(s *subscriber, ev event) {
	select {
	case s.ch <- ev:
	default:
		delete(h.subs, s)
		close(s.ch)
	}
}

// rowsLocked are the current rows, oldest agent first.
func (h *hub) rowsLocked() []Row {
	out := make([]Row, 0, len(h.order))
	for _, id := range h.order {
		out = append(out, h.rows[id])
	}
	return out
}

// Rows are the agents as last seen.
func (h *hub) Rows() []Row {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rowsLocked()
}

type snapshot struct {
	Agents     []Row `json:"agents"`
	NeedsInput int   `json:"needs_input"`
}

func snapshotOf(rows []Row) snapshot {
	n := 0
	for _, r := range rows {
		if r.Group == "needs_input" {
			n++
		}
	}
	return snapshot{Agents: rows, NeedsInput: n}
}

// subscribe registers a client and returns what it must be sent first: the events
// after lastID when they are still kept, else a snapshot (with the current id), then
// the last screen of each agent it watches.
func (h *hub) subscribe(lastID string, screens []string) (s *subscriber, backlog []event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s = &subscriber{ch: make(chan event, subBuffer), screens: map[string]bool{}}
	for _, id := range screens {
		s.screens[id] = true
	}
	h.subs[s] = struct{}{}
	defer func() {
		for _, id := range screens {
			if st, ok := h.screens[id]; ok {
				backlog = append(backlog, event{name: "agent.screen", data: st.data, screen: id})
			}
		}
	}()
	if boot, n, ok := strings.Cut(lastID, "-"); ok && boot == h.boot {
		if seq, err := strconv.ParseUint(n, 10, 64); err == nil && seq <= h.seq &&
			(seq == h.seq || len(h.ring) > 0 && h.ring[0].seq <= seq+1) {
			for _, ev := range h.ring {
				if ev.seq > seq {
					backlog = append(backlog, ev)
				}
			}
			return s, backlog
		}
	}
	b, _ := json.Marshal(snapshotOf(h.rowsLocked()))
	return s, []event{{seq: h.seq, name: "snapshot", data: b}}
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// watched are the agents some client watches the screen of.
func (h *hub) watched() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]bool{}
	for s := range h.subs {
		for id := range s.screens {
			out[id] = true
		}
	}
	return out
}

// screen sends an agent's screen (capture-pane -e's text) to its watchers when it
// changed: its lines of styled spans (internal/screen), which the page draws as text.
// Only the agent's follower calls it, so the parse is done outside the hub's lock.
func (h *hub) screen(id, raw string) {
	h.mu.Lock()
	st, ok := h.screens[id]
	h.mu.Unlock()
	if ok && st.raw == raw {
		return
	}
	b, err := json.Marshal(screenEvent{ID: id, Lines: screen.Parse(raw)})
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.screens[id] = screenState{raw: raw, data: b}
	for s := range h.subs {
		if s.screens[id] {
			h.sendLocked(s, event{name: "agent.screen", data: b, screen: id})
		}
	}
}

// forgetScreen drops an agent's last screen when nobody follows it any more: a page
// opened later waits for a fresh one rather than get a stale one.
func (h *hub) forgetScreen(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.screens, id)
}

// screenEvent is the data of agent.screen.
type screenEvent struct {
	ID    string        `json:"id"`
	Lines screen.Screen `json:"lines"`
}

// update compares the agents now with the rows last seen and publishes what changed.
func (h *hub) update(views []agents.View, busy, contexts, guards, down map[string]string) {
	var pending []notification // told once the lock is released
	h.mu.Lock()
	defer func() {
		h.mu.Unlock()
		if h.notify != nil {
			for _, n := range pending {
				h.notify(n.event, n.row, n.text)
			}
		}
	}()
	seen := map[string]bool{}
	var order []string
	for _, v := range views {
		r := rowOf(v)
		r.Busy, r.Context = busy[r.ID], contexts[r.ID]
		if r.Input != "" {
			r.Guard = guards[r.ID]
		}
		if why, ok := down[r.Host]; ok {
			// Its host does not answer: what was last heard, greyed, no actions.
			r.Unreachable, r.CanPause, r.CanResume = true, false, false
			r.LastError = "host " + r.Host + " unreachable: " + why
		}
		if r.Busy != "" {
			r.CanPause, r.CanResume = false, false
		}
		r.texts()
		seen[r.ID] = true
		order = append(order, r.ID)
		old, existed := h.rows[r.ID]
		h.rows[r.ID] = r
		switch {
		case !existed:
			h.publishLocked("agent.created", map[string]any{"id": r.ID, "row": r})
			continue
		case old == r:
			continue
		}
		source := "record"
		if old.State == r.State {
			source = "status"
		}
		h.publishLocked("agent.state", map[string]any{"id": r.ID, "state": r.State, "activity": r.Activity,
			"detail": r.Detail, "since": r.Since, "source": source, "row": r})
		if r.Attention != "" && old.Attention == "" {
			h.publishLocked("agent.attention", map[string]any{"id": r.ID, "why": r.Attention, "row": r})
			pending = append(pending, notification{"agent.attention", r.Attention, r})
		}
		if r.State == string(agents.Active) && r.Activity == "needs_input" && (old.State != r.State || old.Activity != r.Activity) {
			h.publishLocked("agent.needs_input", map[string]any{"id": r.ID, "kind": r.Detail, "tool": r.Tool, "summary": r.Summary, "row": r})
			pending = append(pending, notification{"agent.needs_input", cmp.Or(r.Summary, r.Detail), r})
		}
		if old.State == r.State {
			continue
		}
		if !agents.State(r.State).Running() {
			// Its live screen is gone: a page opened now shows what the pause or the
			// exit kept, not the last live screen.
			delete(h.screens, r.ID)
		}
		switch agents.State(r.State) {
		case agents.Paused:
			h.publishLocked("agent.paused", map[string]any{"id": r.ID, "freed_kb": r.FreedKB, "pause": v.Pause, "row": r})
		case agents.Active:
			if old.State == string(agents.Resuming) || agents.State(old.State).Resumable() {
				h.publishLocked("agent.resumed", map[string]any{"id": r.ID, "row": r})
			}
		case agents.Exited, agents.Lost, agents.Failed:
			var lines []string
			if v.Exit != nil {
				lines = v.Exit.LastLines
			}
			h.publishLocked("agent."+r.State, map[string]any{"id": r.ID, "reason": r.LastError, "last_lines": lines, "row": r})
			if r.State != string(agents.Lost) {
				pending = append(pending, notification{"agent." + r.State, r.LastError, r})
			}
		}
	}
	for _, id := range h.order {
		if !seen[id] {
			delete(h.rows, id)
			delete(h.screens, id)
			h.publishLocked("agent.removed", map[string]any{"id": id})
		}
	}
	h.order = order
}

// watch refreshes the rows every Poll until ctx ends, and at once when poked (an
// operation of this server finished). Every second refresh asks tmux for liveness.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refresh(n%2 == 0)
		case <-s.poke:
			s.refresh(true)
		}
	}
}

// pokeWatch asks for a refresh now; a poke already pending is enough.
func (s *Server) pokeWatch() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// refresh reads the agents and publishes the changes. A full refresh reconciles with
// tmux (one call) and reads memory; a quick one reads only the records and status
// files, keeping the memory last read.
func (s *Server) refresh(full bool) {
	var views []agents.View
	if full {
		views, _ = s.agents.List()
		s.agents.AddSpent(views)
	} else {
		records, _ := s.agents.Store.List()
		last := map[string]Row{}
		for _, r := range s.hub.Rows() {
			last[r.ID] = r
		}
		for _, r := range records {
			v := agents.View{Record: r, Activity: s.agents.Store.ReadStatus(r.ID)}
			if l, ok := last[r.ID]; ok && l.State == string(r.State) && r.State.Running() {
				v.RSSKB = l.RSSKB
			}
			if l, ok := last[r.ID]; ok {
				v.Tokens = l.Tokens
			}
			views = append(views, v)
		}
	}
	remote, down := s.fleet.views()
	s.hub.update(append(views, remote...), s.busy(), s.contexts(views), s.guardOpinions(views), down)
	s.savedCheck()
	s.terms.follow(s, views, s.hub.watched())
}

// savedCheck publishes project.saved when the workspace's newest snapshot set changed
// (a save, a close, an automatic save, an agent's pause): LATEST-SESSION.txt names it.
func (s *Server) savedCheck() {
	snaps := state.Open(s.ws, nil).Snapshots()
	latest, _ := snaps.LatestID() // "" when there is none (yet)
	if !s.sawSaves {
		s.sawSaves, s.lastSaved = true, latest // what was there at the start is no news
		return
	}
	if latest == "" || latest == s.lastSaved {
		return
	}
	s.lastSaved = latest
	snap, err := snaps.Read(latest)
	if err != nil {
		return
	}
	data := map[string]any{"snapshot_id": snap.SnapshotID, "trigger": snap.Trigger, "saved_at": snap.SavedAt, "session_id": snap.SessionID}
	if snap.Project != nil {
		data["project"], data["name"], data["progress"] = snap.Project.ID, snap.Project.Name, snap.Project.Progress
	}
	s.hub.publish("project.saved", data)
}

// contexts reads how full each active agent's context is ("42%"), from the tail of its
// transcript; an agent whose transcript says nothing yet has none.
func (s *Server) contexts(views []agents.View) map[string]string {
	out := map[string]string{}
	for _, v := range views {
		if v.State != agents.Active {
			continue
		}
		if pct, ok := s.agents.ContextPercent(v.Record); ok {
			out[v.ID] = strconv.Itoa(int(pct+0.5)) + "%"
		}
	}
	return out
}

// events is the event stream (Server-Sent Events): named events with ids of
// <boot>-<seq>, the backlog after Last-Event-ID or a snapshot, a comment every
// Heartbeat. Each ?screen=ID adds that agent's screen (agent.screen), pushed as it
// changes (terminal.go).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	screens := r.URL.Query()["screen"]
	if len(screens) > maxScreens {
		writeError(w, http.StatusBadRequest, fmt.Errorf("at most %d screens in one stream", maxScreens))
		return
	}
	for _, id := range screens {
		if _, ok := s.hub.rowByID(id); !ok {
			writeError(w, http.StatusNotFound, fmt.Errorf("no agent %q", id))
			return
		}
	}
	rc := http.NewResponseController(w)
	sub, backlog := s.hub.subscribe(r.Header.Get("Last-Event-ID"), screens)
	defer s.hub.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(ev event) error {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		var b strings.Builder
		if ev.screen == "" {
			fmt.Fprintf(&b, "id: %s\n", s.hub.id(ev.seq))
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.name, ev.data)
		if _, err := w.Write([]byte(b.String())); err != nil {
			return err
		}
		return rc.Flush()
	}
	for _, ev := range backlog {
		if write(ev) != nil {
			return
		}
	}
	if len(screens) > 0 {
		s.pokeWatch() // its follower starts now, not at the next poll
	}
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-sub.ch:
			if !ok || write(ev) != nil {
				return
			}
		case <-beat.C:
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func (h *hub) rowByID(id string) (Row, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rows[id]
	return r, ok
}
