package claude

// Registrations is the test input of the settings tests: the hooks ctx registers, as
// events.Table gives them (internal/events's TestTableRows checks the real ones; this
// package sits below events and cannot ask it).
func Registrations(ctxBin string) []Registration {
	reg := func(event, matcher, sub string, timeout int) Registration {
		return Registration{Event: event, Matcher: matcher, Command: HookCommand(ctxBin, sub), Timeout: timeout}
	}
	return []Registration{
		reg(EventSessionStart, "", "session-start", 10),
		reg(EventUserPromptSubmit, "", "check-context-size", 10),
		reg(EventPreToolUse, "Bash", "block-dangerous-commands", 10),
		reg(EventPostToolUse, "*", "record-action", 10),
		reg(EventStop, "", "stop", 10),
		reg(EventPreCompact, "", "pre-compact", 10),
		reg(EventPostCompact, "", "post-compact", 10),
		reg(EventSessionEnd, "", "session-end", 2),
		reg(EventPermissionRequest, "*", "permission-request", 10),
	}
}
