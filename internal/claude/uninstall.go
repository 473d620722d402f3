package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/jsonedit"
)

// RemoveCtx returns the settings JSON without ctx: every hook entry ctx's hook commands
// are recognised by (any subcommand, in every form MergeSettings recognises), the
// matcher groups, event lists and "hooks" object that held nothing else, and the
// statusLine ctx set. A statusLine that wraps the person's own command
// (`ctx statusline -- CMD`) is given back that command. The person's own hooks and
// keys keep their bytes. changed is false when there was no ctx in it.
func RemoveCtx(in []byte) (out []byte, changed bool, err error) {
	return removeCtx(in, true)
}

// removeCtx is RemoveCtx; without keepChained a wrapping statusLine goes whole, as it
// must when ctx init wrapped a status line of another settings level into this file.
func removeCtx(in []byte, keepChained bool) (out []byte, changed bool, err error) {
	doc, err := parseSettings(in)
	if err != nil {
		return nil, false, err
	}
	out = in
	if _, ok := doc.Get(keyHooks); ok {
		hooks, err := settingsHooks(doc)
		if err != nil {
			return nil, false, err
		}
		layout := doc.Layout()
		kept, removed, err := removeCtxHooks(hooks, layout)
		if err != nil {
			return nil, false, err
		}
		if removed {
			changed = true
			if len(kept) == 0 {
				out = doc.Remove(keyHooks)
			} else {
				out = doc.Set(keyHooks, kept.Encode(layout, depthMember))
			}
		}
	}
	sl, err := ReadStatusLine(out)
	if err != nil {
		return nil, false, err
	}
	if isCtx, chained := CtxStatusLine(sl.Command); isCtx {
		changed = true
		if chained != "" && keepChained {
			if out, _, err = MergeStatusLine(out, chained); err != nil {
				return nil, false, err
			}
		} else {
			d, err := parseSettings(out)
			if err != nil {
				return nil, false, err
			}
			out = d.Remove(keyStatusLine)
		}
	}
	return out, changed, nil
}

// removeCtxHooks drops ctx's entries from every event of hooks; a group or event left
// empty by that goes too. Groups ctx did not touch keep their bytes.
func removeCtxHooks(hooks jsonedit.Object, l jsonedit.Layout) (kept jsonedit.Object, removed bool, err error) {
	kept = jsonedit.Object{}
	for _, event := range hooks {
		groups, err := settingsEventGroups(hooks, event.Key)
		if err != nil {
			return nil, false, err
		}
		var elems []json.RawMessage
		eventChanged := false
		for _, g := range groups {
			var entries []json.RawMessage
			for _, e := range g.entries {
				if _, _, ok := ctxEntryCommand(e); ok {
					g.dirty = true
					continue
				}
				entries = append(entries, e)
			}
			if !g.dirty {
				elems = append(elems, g.raw)
				continue
			}
			eventChanged = true
			if len(entries) == 0 {
				continue
			}
			g.obj.Set("hooks", jsonedit.EncodeArray(entries, l, depthGroupHooks))
			elems = append(elems, g.obj.Encode(l, depthGroup))
		}
		switch {
		case !eventChanged:
			kept = append(kept, event)
		case len(elems) > 0:
			removed = true
			kept = append(kept, jsonedit.Member{Key: event.Key, Value: jsonedit.EncodeArray(elems, l, depthEvent)})
		default:
			removed = true
		}
	}
	return kept, removed, nil
}

// UninstallResult says what UninstallSettings did to a settings file.
type UninstallResult struct {
	Changed  bool // ctx was in the file
	Restored bool // the file got back the exact bytes ctx init kept in its backup
	Removed  bool // the file held nothing but ctx's and was deleted
}

// UninstallSettings removes ctx from the settings file at path (RemoveCtx), under the
// lock WriteSettings takes, writing through a symlink. When the backup ctx init kept
// (path+SettingsBackupSuffix) holds no ctx and says the same as the result, its bytes
// are written back, so the file is byte for byte what it was before ctx init (also
// when init wrapped another level's status line into it); a file
// left as an empty object with no backup was created by ctx init and is deleted. The
// backup, ctx's own file, is deleted either way. dryRun writes nothing.
func UninstallSettings(path string, dryRun bool) (UninstallResult, error) {
	var res UninstallResult
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	work := func() error {
		old, mode, existed, err := readSettingsFile(target)
		if err != nil || !existed {
			return err
		}
		out, changed, err := RemoveCtx(old)
		if err != nil {
			return fmt.Errorf("%s: %w (file left untouched)", path, err)
		}
		if !changed {
			return nil
		}
		res.Changed = true
		backupPath := target + SettingsBackupSuffix
		backup, err := os.ReadFile(backupPath)
		hasBackup := err == nil
		if hasBackup {
			// ctx init may have wrapped a status line from another level into this file:
			// then the backup has no status line at all.
			whole, _, err := removeCtx(old, false)
			if _, ctxIn, berr := RemoveCtx(backup); err == nil && berr == nil && !ctxIn &&
				(sameSettingsValue(backup, out) || sameSettingsValue(backup, whole)) {
				out, res.Restored = backup, true
			}
		}
		if !hasBackup && sameSettingsValue(out, []byte("{}")) {
			res.Removed = true
		}
		if dryRun {
			return nil
		}
		if res.Removed {
			if err := os.Remove(target); err != nil {
				return fmt.Errorf("remove %s: %w", path, err)
			}
		} else {
			durable.RemoveStaleTemps(filepath.Dir(target), filepath.Base(target))
			if err := durable.WriteFile(target, out, mode); err != nil {
				return err
			}
		}
		if err := os.Remove(backupPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", backupPath, err)
		}
		return nil
	}
	if dryRun {
		return res, work()
	}
	return res, durable.WithOutsideLock(target, work)
}

// sameSettingsValue reports whether two settings files say the same, whatever their
// layout; empty content is {}.
func sameSettingsValue(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 {
		a = []byte("{}")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	return jsonedit.Equal(a, b)
}
