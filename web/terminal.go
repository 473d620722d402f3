package web

import (
	"context"
	"sync"
	"time"

	"github.com/ctxtools/ctx/agents"
)

// An agent's terminal in the page is its tmux pane, pushed on the event stream as it
// changes. While some page shows an agent's screen, a follower keeps a read-only
// control-mode client of tmux on its session (it does not change the window's size):
// tmux says when the pane printed, and the follower captures the pane with its
// colours and hands it to the hub, which sends it when it changed.
const (
	// maxScreens bounds the screens one event stream may ask for.
	maxScreens = 32
	// screenHistory is how many lines above the visible screen are sent: enough to
	// scroll back over the last answer.
	screenHistory = 150
	// screenSettle lets a burst of output finish before the capture.
	screenSettle = 8 * time.Millisecond
	// screenGap is the least time between two captures of one pane: a streaming
	// answer is drawn about 15 times a second, not once per chunk.
	screenGap = 60 * time.Millisecond
	// screenSafety captures now and then even without word from tmux.
	screenSafety = 30 * time.Second
)

// terminals are the followers running, by agent id. Only the refresh loop starts and
// stops them; a follower whose session ended removes itself.
type terminals struct {
	mu   sync.Mutex
	base context.Context // ends when the server stops
	on   map[string]*follower
	// failed is when a follower last could not attach: it is not started again
	// before followRetry has passed.
	failed map[string]time.Time
	wg     sync.WaitGroup
}

// followRetry is how long a follower that could not attach waits before another try.
const followRetry = 10 * time.Second

type follower struct {
	session string
	cancel  context.CancelFunc
}

// follow makes the followers match what is watched: one for each watched agent that
// runs here, none for the others.
func (t *terminals) follow(s *Server, views []agents.View, watched map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.base == nil || t.base.Err() != nil {
		return
	}
	if t.on == nil {
		t.on, t.failed = map[string]*follower{}, map[string]time.Time{}
	}
	want := map[string]string{}
	for _, v := range views {
		if watched[v.ID] && v.State.Running() && (v.Host == "" || v.Host == agents.LocalHost) {
			want[v.ID] = v.Tmux.Session
		}
	}
	for id, f := range t.on {
		if want[id] != f.session {
			f.cancel()
			delete(t.on, id)
			s.hub.forgetScreen(id)
		}
	}
	for id, session := range want {
		if t.on[id] != nil || time.Since(t.failed[id]) < followRetry {
			continue
		}
		ctx, cancel := context.WithCancel(t.base)
		f := &follower{session: session, cancel: cancel}
		t.on[id] = f
		t.wg.Go(func() {
			defer cancel()
			err := s.followScreen(ctx, id, session)
			t.mu.Lock()
			if t.on[id] == f {
				delete(t.on, id)
			}
			if err != nil {
				t.failed[id] = time.Now()
			}
			t.mu.Unlock()
		})
	}
}

// wait waits for the followers, once base has ended.
func (t *terminals) wait() { t.wg.Wait() }

// followScreen captures the agent's pane at once and then whenever tmux says it
// printed, until ctx ends or the session does. The error is tmux's when it could not
// attach.
func (s *Server) followScreen(ctx context.Context, id, session string) error {
	tm := s.agents.Tmux
	changed := make(chan struct{}, 1)
	ended := make(chan struct{})
	var watchErr error
	go func() {
		defer close(ended)
		watchErr = tm.Watch(ctx, session, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
	}()
	var last time.Time
	capture := func() {
		last = time.Now()
		if raw, err := tm.CaptureStyled(session, screenHistory); err == nil {
			s.hub.screen(id, raw)
		}
	}
	capture()
	safety := time.NewTicker(screenSafety)
	defer safety.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ended:
			capture() // the last screen, as the session left it
			return watchErr
		case <-safety.C:
			capture()
		case <-changed:
			wait := max(screenSettle, time.Until(last.Add(screenGap)))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			select { // what printed while waiting is in this capture
			case <-changed:
			default:
			}
			capture()
		}
	}
}
