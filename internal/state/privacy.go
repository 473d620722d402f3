package state

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/durable"
)

// sessionsIgnore is the .gitignore ctx writes in a new .ctx/sessions folder: snapshot
// sets and journals hold prompts, replies and file names, which are not for a
// repository unless the person decides so (an emptied file is left as it is).
const sessionsIgnore = "# ctx: snapshot sets and journals (they quote prompts and replies) stay out of git.\n# Empty this file to commit them; ctx does not write it again.\n*\n"

// SessionsConfig is the sessions: section of .ctx/config.yaml.
type SessionsConfig struct {
	// CapturePrompts false keeps the wind-down journal from recording prompt text
	// (only that a prompt came, and its length). Unset means true.
	CapturePrompts *bool `yaml:"capture_prompts"`
}

// EnsureSessionsDir creates a sessions folder (.ctx/sessions), and, when no
// .gitignore is there yet, the one that keeps it out of git. It reports whether it
// wrote the .gitignore.
func EnsureSessionsDir(dir string) (wroteIgnore bool, err error) {
	if err := durable.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(ignore); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return durable.CreateExclusive(ignore, []byte(sessionsIgnore), 0o644)
}

// ensureSessionsDir is EnsureSessionsDir for the writers of the folder, which only
// need it to exist.
func ensureSessionsDir(dir string) error {
	_, err := EnsureSessionsDir(dir)
	return err
}
