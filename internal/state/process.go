package state

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// processFile is where the runtime folder keeps the session a claude process last
// started: /clear and /branch start a new session id in the same process.
func (r *Runtime) processFile(pid string) string {
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 || strconv.Itoa(n) != pid {
		return "" // not a process id: never a path
	}
	return filepath.Join(r.Dir, "claude-"+pid)
}

// RecordProcessSession records that the claude process pid runs session id now.
func (r *Runtime) RecordProcessSession(pid, id string) error {
	path := r.processFile(pid)
	if path == "" {
		return nil
	}
	if cur := r.ProcessSession(pid); cur == id {
		return nil
	}
	// Lost in a crash, it costs one carried binding at most.
	return os.WriteFile(path, []byte(id+"\n"), 0o600)
}

// ProcessSession returns the session the claude process pid last started ("" when none
// was recorded).
func (r *Runtime) ProcessSession(pid string) string {
	path := r.processFile(pid)
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// carryFile counts the Stops that looked for a session's parent (events.CarryOnce).
func (r *Runtime) carryFile(sessionID string) (string, error) {
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.Dir, "carried-"+safe), nil
}

// CarryTries returns how many Stops of the session looked for its parent; ok is false
// when the session cannot have a marker (an id that is no file name) or its marker is
// damaged, and then no Stop looks again.
func (r *Runtime) CarryTries(sessionID string) (tries int, ok bool) {
	path, err := r.carryFile(sessionID)
	if err != nil {
		return 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, true
	}
	tries, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return tries, err == nil
}

// SetCarryTries records how many Stops of the session looked for its parent.
func (r *Runtime) SetCarryTries(sessionID string, tries int) error {
	path, err := r.carryFile(sessionID)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strconv.Itoa(tries)), 0o600)
}
