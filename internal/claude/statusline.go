package claude

import (
	"encoding/json"

	"github.com/ctxtools/ctx/internal/jsonedit"
)

// StatusLine is Claude Code's statusLine setting as a settings file holds it.
type StatusLine struct {
	Command string // "" when the setting is absent or not a command
	Present bool   // the file has a statusLine key
}

// ReadStatusLine returns the statusLine setting of a settings file's content.
func ReadStatusLine(in []byte) (StatusLine, error) {
	doc, err := parseSettings(in)
	if err != nil {
		return StatusLine{}, err
	}
	raw, ok := doc.Get(keyStatusLine)
	if !ok {
		return StatusLine{}, nil
	}
	var v struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(raw, &v)
	return StatusLine{Command: v.Command, Present: true}, nil
}

const keyStatusLine = "statusLine"

// MergeStatusLine returns the settings with statusLine set to run command, keeping the
// setting's other keys (padding) and every other byte of the file. changed is false
// when the setting already runs it.
func MergeStatusLine(in []byte, command string) (out []byte, changed bool, err error) {
	doc, err := parseSettings(in)
	if err != nil {
		return nil, false, err
	}
	obj := jsonedit.Object{}
	if raw, ok := doc.Get(keyStatusLine); ok {
		if obj, ok = jsonedit.ParseObject(raw); !ok {
			return nil, false, settingsInvalid(`"statusLine" is %s, not an object`, jsonedit.Kind(raw))
		}
	}
	before := obj.Encode(jsonedit.Compact, depthMember)
	obj.Set("type", jsonedit.String("command"))
	obj.Set("command", jsonedit.String(command))
	if jsonedit.Equal(before, obj.Encode(jsonedit.Compact, depthMember)) {
		return in, false, nil
	}
	return doc.Set(keyStatusLine, obj.Encode(doc.Layout(), depthMember)), true, nil
}

// WriteStatusLine sets the statusLine of the settings file at path to command, as
// WriteSettings writes hooks: under a lock, atomically, keeping the previous file as
// path+SettingsBackupSuffix (unless keepBackup: a write just before, in the same run,
// made the backup of the person's file, or there was no file), through a symlink,
// refusing a file that is not valid JSON.
func WriteStatusLine(path, command string, dryRun, keepBackup bool) (changed bool, backup string, err error) {
	return writeSettingsFile(path, func(old []byte) ([]byte, bool, error) { return MergeStatusLine(old, command) }, dryRun, keepBackup)
}
