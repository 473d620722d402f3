//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

// browserTyped is how many keystrokes the browser case times.
const browserTyped = 30

// measureBrowser times a pane change to the browser: headless Chromium signs in with
// the login URL and opens the Terminals page, which watches every running agent's
// terminal on one event stream; a marker typed into one pane (tmux send-keys) is timed
// until the page's own DOM holds it (a MutationObserver stamps Date.now(), the same
// wall clock as the send). No Chromium: no figures, and the caller says so.
func measureBrowser(login string, ids []string, tmux func(...string) error) ([]time.Duration, error) {
	var chrome string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		return nil, errNoChromium
	}
	profile, err := os.MkdirTemp("", "ctx-bench-chromium-")
	if err != nil {
		return nil, err
	}
	defer remove(profile)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900))
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	base := login[:len(login)-len("/login?t=")-64]
	ctx, stop := context.WithTimeout(bctx, 2*time.Minute)
	defer stop()
	observe := `window.seen = {}; new MutationObserver(() => {
		for (const pre of document.querySelectorAll('pre.term')) {
			const w = window.want; if (w && !window.seen[w] && pre.textContent.includes(w)) window.seen[w] = Date.now();
		}
	}).observe(document.querySelector('.terms'), {subtree: true, childList: true, characterData: true}); true`
	if err := chromedp.Do(ctx, chromedp.Navigate(login), chromedp.WaitReady(chromedp.CSS(`#live.on`)),
		chromedp.Navigate(base+"/terminals"), chromedp.WaitReady(chromedp.CSS(`#live.on`))); err != nil {
		return nil, fmt.Errorf("chromium: %w", err)
	}
	// Every terminal drawn before the timing starts.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('pre.term[data-drawn]').length`))
		if err != nil {
			return nil, err
		}
		if n >= len(ids) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the Terminals page drew %d of %d terminals in 15 s", n, len(ids))
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](observe)); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := range browserTyped {
		id := ids[i%len(ids)]
		marker := fmt.Sprintf("seen-%03d-%s", i, id)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`window.want = %q; true`, marker))); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := tmux("send-keys", "-t", "=ctx-"+id+":", "-l", marker); err != nil {
			return nil, err
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			at, err := chromedp.Run(ctx, chromedp.Evaluate[int64](fmt.Sprintf(`window.seen[%q] || 0`, marker)))
			if err != nil {
				return nil, err
			}
			if at > 0 {
				out = append(out, time.UnixMilli(at).Sub(start))
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("the page never showed %q", marker)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out, nil
}

var errNoChromium = errors.New("no chromium (apt-get install chromium)")
