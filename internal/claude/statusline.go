package claude

import (
	"encoding/json"
	"strings"

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

// StatusLineCommand returns the statusLine command that runs `ctx statusline`, chaining
// to chained (the person's own status-line command, "" for none). Like HookCommand it
// is quiet where ctx is absent, and there the person's own command still runs:
//
//	command -v ctx >/dev/null 2>&1 || exit 0; exec ctx statusline
//	if command -v ctx >/dev/null 2>&1; then exec ctx statusline -- 'CMD' ; else exec sh -c 'CMD' ; fi
func StatusLineCommand(ctxBin, chained string) string {
	bin := "ctx"
	if ctxBin != "" {
		bin = quoteCtxBin(ctxBin)
	}
	if chained == "" {
		return "command -v " + bin + " >/dev/null 2>&1 || exit 0; exec " + bin + " statusline"
	}
	q := shellQuote(chained)
	return "if command -v " + bin + " >/dev/null 2>&1; then exec " + bin + " statusline -- " + q + " ; else exec sh -c " + q + " ; fi"
}

// CtxStatusLine reports whether a statusLine command runs ctx's, and the command it
// chains to ("" for none).
func CtxStatusLine(command string) (isCtx bool, chained string) {
	words := ctxCommandWords(command)
	guarded := "" // the binary StatusLineCommand's guard tests, which may be a renamed ctx
	for i := 0; i+2 < len(words); i++ {
		if words[i] == "command" && words[i+1] == "-v" {
			guarded = words[i+2]
			break
		}
	}
	for i := 0; i+1 < len(words); i++ {
		runs := i == 0 || words[i-1] == "exec" // a command word, not an argument of echo
		if runs && (isCtxBinary(words[i]) || words[i] == guarded) && words[i+1] == "statusline" {
			if i+3 < len(words) && words[i+2] == "--" {
				chained = words[i+3]
			}
			return true, chained
		}
	}
	return false, ""
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

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
