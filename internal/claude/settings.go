package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/jsonedit"
)

// SettingsBackupSuffix is added to a settings file's name for the copy WriteSettings
// keeps of it before changing it.
const SettingsBackupSuffix = ".ctx-backup"

// ErrSettingsInvalid is matched (with errors.Is) by the errors MergeSettings,
// InstalledHooks and WriteSettings return for a settings file that is not valid JSON or
// not shaped as Claude Code expects: a problem for the user to fix, not a ctx failure.
var ErrSettingsInvalid = errors.New("settings file is not valid")

type settingsInvalidError struct{ err error }

func (e *settingsInvalidError) Error() string        { return e.err.Error() }
func (e *settingsInvalidError) Unwrap() error        { return e.err }
func (e *settingsInvalidError) Is(target error) bool { return target == ErrSettingsInvalid }

func settingsInvalid(format string, args ...any) error {
	return &settingsInvalidError{fmt.Errorf(format, args...)}
}

// Registration is one hook ctx registers.
type Registration struct {
	Event   string // Claude Code's hook event, e.g. "PreToolUse"
	Matcher string // the tool-name pattern; "" registers the hook without one
	Command string // the shell command Claude Code runs
	Timeout int    // seconds before Claude Code cancels the command; 0 keeps its default
}

// Key names the registration in InstalledHooks' maps: the event and the ctx system
// subcommand, e.g. "PreToolUse/block-dangerous-commands".
func (r Registration) Key() string {
	return r.Event + "/" + r.Subcommand()
}

// Subcommand returns the `ctx system` subcommand the registration runs, or "" when its
// command is not a ctx system command.
func (r Registration) Subcommand() string {
	sub, _ := ctxSystemSubcommand(r.Command)
	return sub
}

// MergeSettings returns the settings JSON with ctx's hooks merged in. Everything else
// stays as it was: the bytes of the other top-level keys, their order, and the user's
// own hooks. ctx's entries are recognised by their command, in every form ctx has
// written (`ctx system SUB`, `/path/to/ctx system SUB`, HookCommand's guarded form),
// and updated in place, never duplicated; ctx entries for subcommands not in regs are
// left alone. changed reports whether anything changed; when nothing did, out is in
// itself. Empty input means {}. Input that is not valid JSON, or whose "hooks" or event
// lists are not shaped as Claude Code expects, is an error matching ErrSettingsInvalid.
func MergeSettings(in []byte, regs []Registration) (out []byte, changed bool, err error) {
	doc, err := parseSettings(in)
	if err != nil {
		return nil, false, err
	}
	old, present := doc.Get(keyHooks)
	if !present && len(regs) == 0 {
		return in, false, nil
	}
	hooks, err := settingsHooks(doc)
	if err != nil {
		return nil, false, err
	}
	layout := doc.Layout()
	for _, r := range regs {
		if hooks, err = mergeRegistration(hooks, r, layout); err != nil {
			return nil, false, err
		}
	}
	merged := hooks.Encode(layout, depthMember)
	if present && jsonedit.Equal(old, merged) {
		return in, false, nil
	}
	return doc.Set(keyHooks, merged), true, nil
}

// InstalledHooks reports, for `ctx doctor`, which registrations a settings file holds
// (present: a ctx entry for the same event and subcommand) and which of those are
// current (MergeSettings would leave them as they are). Both maps are keyed by
// Registration.Key.
func InstalledHooks(in []byte, regs []Registration) (present, current map[string]bool, err error) {
	doc, err := parseSettings(in)
	if err != nil {
		return nil, nil, err
	}
	hooks, err := settingsHooks(doc)
	if err != nil {
		return nil, nil, err
	}
	present = make(map[string]bool, len(regs))
	current = make(map[string]bool, len(regs))
	for _, r := range regs {
		groups, err := settingsEventGroups(hooks, r.Event)
		if err != nil {
			return nil, nil, err
		}
		found := findCtxEntries(groups, r.Subcommand())
		present[r.Key()] = len(found) > 0
		if !present[r.Key()] {
			continue
		}
		merged, err := mergeRegistration(hooks, r, jsonedit.Compact)
		if err != nil {
			return nil, nil, err
		}
		current[r.Key()] = jsonedit.Equal(hooks.Encode(jsonedit.Compact, depthMember), merged.Encode(jsonedit.Compact, depthMember))
	}
	return present, current, nil
}

// InstalledBinaries returns the binaries that ctx's hook entries in a settings file
// call (the ctx word of each command, unquoted: "ctx" or a path), each once.
func InstalledBinaries(in []byte) ([]string, error) {
	doc, err := parseSettings(in)
	if err != nil {
		return nil, err
	}
	hooks, err := settingsHooks(doc)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, event := range hooks {
		groups, err := settingsEventGroups(hooks, event.Key)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			for _, entry := range g.entries {
				bin, _, ok := ctxEntryCommand(entry)
				if ok && !seen[bin] {
					seen[bin] = true
					out = append(out, bin)
				}
			}
		}
	}
	return out, nil
}

// WriteSettings merges ctx's hooks into the settings file at path and writes it
// atomically, keeping its mode, after copying the previous file to
// path+SettingsBackupSuffix (only when the file existed and its content changes). A file
// that is not valid JSON is refused and left untouched. A symlinked settings file (a
// dotfiles checkout) is written through the link, not replaced. dryRun writes nothing
// and reports whether the file would change.
func WriteSettings(path string, regs []Registration, dryRun bool) (changed bool, backup string, err error) {
	return writeSettingsFile(path, func(old []byte) ([]byte, bool, error) { return MergeSettings(old, regs) }, dryRun, false)
}

// writeSettingsFile is the one way ctx writes a Claude Code settings file: through a
// symlink rather than over it, under a lock with the file re-read after it is taken
// (another ctx may have written it meanwhile), merge applied to the current content,
// the previous file kept as path+SettingsBackupSuffix when it existed and changes
// (unless keepBackup: a write just before, in the same run, made the backup of the
// person's file), then an atomic replace keeping its mode. Content that is not valid
// JSON is refused and left untouched. dryRun writes nothing and reports whether the
// file would change.
func writeSettingsFile(path string, merge func([]byte) ([]byte, bool, error), dryRun, keepBackup bool) (changed bool, backup string, err error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir := filepath.Dir(target)
	write := func() error {
		old, mode, existed, err := readSettingsFile(target)
		if err != nil {
			return err
		}
		out, ch, err := merge(old)
		if err != nil {
			return fmt.Errorf("%s: %w (file left untouched)", path, err)
		}
		if !ch || dryRun {
			changed = ch
			return nil
		}
		if existed && !keepBackup {
			b := target + SettingsBackupSuffix
			durable.RemoveStaleTemps(dir, filepath.Base(b))
			if err := durable.WriteFile(b, old, mode); err != nil {
				return err
			}
			backup = b
		}
		durable.RemoveStaleTemps(dir, filepath.Base(target))
		if err := durable.WriteFile(target, out, mode); err != nil {
			return err
		}
		changed = true
		return nil
	}
	if dryRun {
		return changed, "", write()
	}
	if err := durable.MkdirAll(dir, 0o755); err != nil {
		return false, "", err
	}
	err = durable.WithOutsideLock(target, write)
	return changed, backup, err
}

// readSettingsFile returns the file's content and mode; a missing file reads as empty
// with the mode a new one gets.
func readSettingsFile(path string) (data []byte, mode fs.FileMode, existed bool, err error) {
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("read settings: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("read settings: %w", err)
	}
	return data, info.Mode().Perm(), true, nil
}

// CtxHookFiles returns the files among files, other than the file at except (none when
// except is ""), that register any ctx hook. A file that is missing, unreadable or not
// valid settings is left out: whoever writes it reports that.
func CtxHookFiles(files []SettingsFile, except string) []SettingsFile {
	var out []SettingsFile
	for _, f := range files {
		if except != "" && durable.SameFile(f.Path, except) {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			continue
		}
		if bins, err := InstalledBinaries(data); err == nil && len(bins) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// mergeRegistration returns hooks with r's entry in place: the first ctx entry for r's
// subcommand under r's matcher is updated, other copies are removed, and when there is
// none a new matcher group is appended to the event's list.
func mergeRegistration(hooks jsonedit.Object, r Registration, l jsonedit.Layout) (jsonedit.Object, error) {
	sub := r.Subcommand()
	if sub == "" {
		return nil, fmt.Errorf("hook registration %s: command %q is not a `ctx system` command", r.Event, r.Command)
	}
	groups, err := settingsEventGroups(hooks, r.Event)
	if err != nil {
		return nil, err
	}
	found := findCtxEntries(groups, sub)

	keep := -1
	for i, f := range found {
		if sameHookMatcher(groups[f.group].matcher(), r.Matcher) {
			keep = i
			break
		}
	}
	if keep < 0 {
		// An entry under another matcher is moved to the right one by fixing its group's
		// matcher, but only when the group holds nothing else: other hooks in it must
		// keep the matcher they were given.
		for i, f := range found {
			if groups[f.group].only(sub) {
				groups[f.group].setMatcher(r.Matcher)
				keep = i
				break
			}
		}
	}

	for i, f := range found {
		g := groups[f.group]
		if i == keep {
			g.entries[f.entry] = updatedCtxEntry(g.entries[f.entry], r, l)
		} else {
			g.entries[f.entry] = nil
		}
		g.dirty = true
	}
	if keep < 0 {
		groups = append(groups, newCtxGroup(r, l))
	}

	elems := make([]json.RawMessage, 0, len(groups))
	for _, g := range groups {
		if !g.dirty {
			elems = append(elems, g.raw)
			continue
		}
		var entries []json.RawMessage
		for _, e := range g.entries {
			if e != nil {
				entries = append(entries, e)
			}
		}
		if len(entries) == 0 {
			// ctx's removals emptied the group; an empty group is noise.
			continue
		}
		g.obj.Set("hooks", jsonedit.EncodeArray(entries, l, depthGroupHooks))
		elems = append(elems, g.obj.Encode(l, depthGroup))
	}
	out := append(jsonedit.Object(nil), hooks...)
	out.Set(r.Event, jsonedit.EncodeArray(elems, l, depthEvent))
	return out, nil
}

// settingsEventGroups parses the matcher groups listed under event; a missing event
// has none.
func settingsEventGroups(hooks jsonedit.Object, event string) ([]*settingsGroup, error) {
	raw, ok := hooks.Get(event)
	if !ok {
		return nil, nil
	}
	elems, ok := jsonedit.ParseArray(raw)
	if !ok {
		return nil, settingsInvalid(`"hooks"."%s" is %s, not an array of matcher groups`, event, jsonedit.Kind(raw))
	}
	groups := make([]*settingsGroup, len(elems))
	for i, e := range elems {
		groups[i] = parseSettingsGroup(e)
	}
	return groups, nil
}

// settingsGroup is one matcher group: {"matcher": ..., "hooks": [...]}. A group that is
// not shaped like that is kept as it is and never looked into.
type settingsGroup struct {
	raw     json.RawMessage
	obj     jsonedit.Object   // nil when raw is not a well-formed group
	entries []json.RawMessage // its "hooks" list; a nil element was removed
	dirty   bool
}

func parseSettingsGroup(raw json.RawMessage) *settingsGroup {
	g := &settingsGroup{raw: raw}
	obj, ok := jsonedit.ParseObject(raw)
	if !ok {
		return g
	}
	hooksRaw, ok := obj.Get("hooks")
	if !ok {
		return g
	}
	entries, ok := jsonedit.ParseArray(hooksRaw)
	if !ok {
		return g
	}
	g.obj, g.entries = obj, entries
	return g
}

// matcher returns the group's matcher; "" when it has none. A matcher that is not a
// string is returned as its JSON so that it never equals a registration's.
func (g *settingsGroup) matcher() string {
	raw, ok := g.obj.Get("matcher")
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw)
	}
	return s
}

func (g *settingsGroup) setMatcher(m string) {
	if m == "" {
		g.obj.Remove("matcher")
	} else {
		g.obj.Set("matcher", jsonedit.String(m))
	}
	g.dirty = true
}

// only reports whether every hook in the group runs `ctx system sub`.
func (g *settingsGroup) only(sub string) bool {
	for _, e := range g.entries {
		if s, ok := ctxEntrySubcommand(e); !ok || s != sub {
			return false
		}
	}
	return true
}

// sameHookMatcher compares matchers as Claude Code applies them: "*", "" and no matcher all
// match everything.
func sameHookMatcher(a, b string) bool {
	norm := func(m string) string {
		if m == "*" {
			return ""
		}
		return m
	}
	return norm(a) == norm(b)
}

type ctxEntryRef struct{ group, entry int }

// findCtxEntries returns, in file order, the ctx entries running `ctx system sub`.
func findCtxEntries(groups []*settingsGroup, sub string) []ctxEntryRef {
	var found []ctxEntryRef
	for gi, g := range groups {
		for ei, e := range g.entries {
			if s, ok := ctxEntrySubcommand(e); ok && s == sub {
				found = append(found, ctxEntryRef{gi, ei})
			}
		}
	}
	return found
}

// ctxEntrySubcommand returns the ctx system subcommand a hook entry runs.
func ctxEntrySubcommand(entry json.RawMessage) (string, bool) {
	_, sub, ok := ctxEntryCommand(entry)
	return sub, ok
}

// ctxEntryCommand reads a hook entry's command with ctxHookCommand.
func ctxEntryCommand(entry json.RawMessage) (bin, sub string, ok bool) {
	obj, ok := jsonedit.ParseObject(entry)
	if !ok {
		return "", "", false
	}
	raw, ok := obj.Get("command")
	if !ok {
		return "", "", false
	}
	var command string
	if err := json.Unmarshal(raw, &command); err != nil {
		return "", "", false
	}
	return ctxHookCommand(command)
}

// updatedCtxEntry sets r's type, command and timeout in an existing entry, keeping any other
// keys the user added (and their order).
func updatedCtxEntry(entry json.RawMessage, r Registration, l jsonedit.Layout) json.RawMessage {
	obj, _ := jsonedit.ParseObject(entry)
	obj.Set("type", jsonedit.String("command"))
	obj.Set("command", jsonedit.String(r.Command))
	if r.Timeout > 0 {
		obj.Set("timeout", json.RawMessage(fmt.Sprint(r.Timeout)))
	} else {
		obj.Remove("timeout")
	}
	return obj.Encode(l, depthEntry)
}

func newCtxGroup(r Registration, l jsonedit.Layout) *settingsGroup {
	var g jsonedit.Object
	if r.Matcher != "" {
		g.Set("matcher", jsonedit.String(r.Matcher))
	}
	g.Set("hooks", jsonedit.EncodeArray([]json.RawMessage{updatedCtxEntry(json.RawMessage("{}"), r, l)}, l, depthGroupHooks))
	return &settingsGroup{raw: g.Encode(l, depthGroup)}
}

// parseSettings parses a settings file's content; content that is not a JSON object is
// an error matching ErrSettingsInvalid. Empty content is {}.
func parseSettings(in []byte) (*jsonedit.Doc, error) {
	doc, err := jsonedit.Parse(in)
	if err != nil {
		return nil, &settingsInvalidError{err}
	}
	return doc, nil
}

// settingsHooks returns the parsed "hooks" object; none yet is an empty one.
func settingsHooks(doc *jsonedit.Doc) (jsonedit.Object, error) {
	raw, ok := doc.Get(keyHooks)
	if !ok {
		return nil, nil
	}
	obj, ok := jsonedit.ParseObject(raw)
	if !ok {
		return nil, settingsInvalid(`"hooks" is %s, not an object`, jsonedit.Kind(raw))
	}
	return obj, nil
}

const keyHooks = "hooks"

// Nesting depths of the parts of a settings file ctx writes, the top-level object being 0.
const (
	depthMember     = 1 // a top-level value: "hooks": {...}, "statusLine": {...}
	depthEvent      = 2 // "PreToolUse": [...]
	depthGroup      = 3 // {"matcher": ..., "hooks": [...]}
	depthGroupHooks = 4 // "hooks": [...] inside a group
	depthEntry      = 5 // {"type": "command", ...}
)
