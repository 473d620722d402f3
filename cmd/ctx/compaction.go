package main

import "github.com/ctxtools/ctx/session"

// hookPostCompact counts the compaction that just happened, unless PreCompact (or the
// transcript's boundary line) already did: one compaction is counted once.
func hookPostCompact(h *hookRun) error {
	_, err := session.OnCompaction(h.WS, session.Compaction{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Signal: session.SignalPostCompact,
		PromptID: h.Payload.PromptID, Trigger: h.Payload.Trigger, Client: h.client(), Now: h.Now(),
	})
	return err
}
