package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxtools/ctx/internal/durable"
)

// EnvConfigDir moves Claude Code's whole folder (~/.claude) elsewhere when it is set.
const EnvConfigDir = "CLAUDE_CONFIG_DIR"

// ConfigDir returns Claude Code's folder: $CLAUDE_CONFIG_DIR, else $HOME/.claude, else
// .claude in the home folder the system names (os.UserHomeDir).
func ConfigDir(getenv func(string) string) (string, error) {
	if dir := getenv(EnvConfigDir); dir != "" {
		return dir, nil
	}
	home, err := homeDir(getenv)
	if err != nil {
		return "", fmt.Errorf("claude config folder: %w", err)
	}
	return filepath.Join(home, ".claude"), nil
}

// homeDir is $HOME, else the home folder the system names.
func homeDir(getenv func(string) string) (string, error) {
	if home := getenv("HOME"); home != "" {
		return home, nil
	}
	return os.UserHomeDir()
}

// globalConfigPath returns Claude Code's global config file, ~/.claude.json (in
// $CLAUDE_CONFIG_DIR when that is set), and how to name it to a person; "" when no
// home folder is known.
func globalConfigPath(getenv func(string) string) (path, label string) {
	const name = ".claude.json"
	if dir := getenv(EnvConfigDir); dir != "" {
		return filepath.Join(dir, name), "$" + EnvConfigDir + "/" + name
	}
	if home, err := homeDir(getenv); err == nil {
		return filepath.Join(home, name), "~/" + name
	}
	return "", ""
}

// Level is one of the settings files Claude Code reads hooks from, named by whose it is.
type Level int

const (
	// LevelProject is the project's .claude/settings.json, committed and shared with
	// the team.
	LevelProject Level = iota
	// LevelLocal is the project's .claude/settings.local.json: one person's, not
	// committed.
	LevelLocal
	// LevelUser is the user's settings.json, for every project of that person.
	LevelUser
)

// String names the level as ctx's messages do: "project", "local" or "user".
func (l Level) String() string {
	switch l {
	case LevelLocal:
		return "local"
	case LevelUser:
		return "user"
	}
	return "project"
}

// SettingsPath returns a level's settings file: the project's .claude/settings.json or
// .claude/settings.local.json, or the user's settings.json in ConfigDir. Only the
// user's level can fail, when no home folder is known.
func SettingsPath(projectDir string, level Level, getenv func(string) string) (string, error) {
	switch level {
	case LevelLocal:
		return filepath.Join(projectDir, ".claude", "settings.local.json"), nil
	case LevelUser:
		dir, err := ConfigDir(getenv)
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, "settings.json"), nil
	}
	return filepath.Join(projectDir, ".claude", "settings.json"), nil
}

// SettingsFile is a settings file Claude Code reads, with its level.
type SettingsFile struct {
	Level Level
	Path  string
}

// SettingsFiles returns the settings files Claude Code reads in projectDir, the
// lowest precedence first: the user's, the project's and the project's local one, each
// file once (in the home folder the project's settings file is the user's). Without a
// projectDir there are no project files; without a home folder, no user's.
func SettingsFiles(projectDir string, getenv func(string) string) []SettingsFile {
	var files []SettingsFile
	for _, level := range []Level{LevelUser, LevelProject, LevelLocal} {
		if level != LevelUser && projectDir == "" {
			continue
		}
		path, err := SettingsPath(projectDir, level, getenv)
		if err != nil {
			continue
		}
		dup := false
		for _, f := range files {
			dup = dup || durable.SameFile(f.Path, path)
		}
		if !dup {
			files = append(files, SettingsFile{level, path})
		}
	}
	return files
}

// TranscriptPath returns where Claude Code keeps the transcript of session id started
// in cwd: <configDir>/projects/<cwd>/<id>.jsonl, the cwd being the physical path (a
// symlink resolved) with every character that is not an ASCII letter or digit made "-".
func TranscriptPath(configDir, cwd, sessionID string) string {
	if p, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = p
	}
	folder := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, cwd)
	return filepath.Join(configDir, "projects", folder, sessionID+".jsonl")
}

// FindTranscript returns Claude Code's transcript of session id in whichever project
// folder holds it (<config>/projects/*/<id>.jsonl), or "" when there is none. An id
// that could not be a file name names no transcript.
func FindTranscript(getenv func(string) string, id string) string {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\*?[`) {
		return ""
	}
	config, err := ConfigDir(getenv)
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(config, "projects", "*", id+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// SessionRecord is Claude Code's record of one interactive claude process,
// <config>/sessions/<pid>.json: written while it runs, removed when it exits, and left
// behind by a SIGKILL.
type SessionRecord struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	// Status is what the process is doing: idle, busy, waiting (WaitingFor says on
	// what: a permission prompt) or shell.
	Status     string `json:"status"`
	WaitingFor string `json:"waitingFor,omitempty"`
}

// The session record statuses ctx acts on.
const (
	StatusIdle    = "idle"
	StatusWaiting = "waiting"
)

// SessionOfProcess returns the session id Claude Code records for its process pid, or
// "" when there is no such record.
func SessionOfProcess(getenv func(string) string, pid string) string {
	if !isPID(pid) {
		return "" // not a process id: never a path
	}
	config, err := ConfigDir(getenv)
	if err != nil {
		return ""
	}
	rec, err := readSessionRecord(filepath.Join(config, "sessions", pid+".json"))
	if err != nil || (rec.PID != 0 && strconv.Itoa(rec.PID) != pid) {
		return ""
	}
	return rec.SessionID
}

// SessionRecords returns every session record in Claude Code's folder, those of
// processes long gone included: whether a PID still runs is for the caller to check.
func SessionRecords(getenv func(string) string) []SessionRecord {
	config, err := ConfigDir(getenv)
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(config, "sessions", "*.json"))
	var out []SessionRecord
	for _, f := range files {
		if rec, err := readSessionRecord(f); err == nil {
			out = append(out, rec)
		}
	}
	return out
}

// isPID reports whether s is a process id as the system writes one: a file name, never
// a path.
func isPID(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && strconv.Itoa(n) == s
}

func readSessionRecord(path string) (SessionRecord, error) {
	var rec SessionRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, errors.New(path + ": not a session record")
	}
	return rec, nil
}
