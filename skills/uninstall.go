package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// What Uninstall did with a skill.
const (
	ActionRemoved = "removed" // ctx's file (this version's or an older one's) was deleted
	ActionAbsent  = "absent"  // there was nothing of ctx's
)

// Uninstall removes from dir the skills Install wrote: the SKILL.md, its manifest,
// and the skill's folder when nothing else is left in it. A file the user changed is
// kept (ActionKept) unless force; files of the user's own in the folder always stay.
// dryRun reports the same results and deletes nothing.
func Uninstall(dir string, force, dryRun bool) ([]InstallResult, error) {
	return eachSkill(func(s Skill) (InstallResult, error) {
		skillDir := filepath.Join(dir, s.Name)
		file, manifest := filepath.Join(skillDir, FileName), filepath.Join(skillDir, ManifestName)
		st, err := inspect(file, manifest, s)
		if err != nil {
			return InstallResult{}, err
		}
		r := InstallResult{Name: s.Name, Path: file, Action: ActionRemoved}
		switch st.status {
		case StatusMissing:
			r.Action = ActionAbsent
		case StatusChanged:
			if !force {
				r.Action, r.Reason = ActionKept, "changed by you; --force removes it"
			} else {
				r.Reason = "changed by you; removed because of --force"
			}
		}
		if !dryRun && r.Action != ActionKept {
			if err := removeSkill(skillDir, r.Action == ActionRemoved); err != nil {
				return InstallResult{}, fmt.Errorf("uninstall skill %s: %w", s.Name, err)
			}
		}
		return r, nil
	})
}

// removeSkill deletes a skill's file (when withFile) and manifest, then the folder if
// that emptied it.
func removeSkill(skillDir string, withFile bool) error {
	names := []string{ManifestName}
	if withFile {
		names = append(names, FileName)
	}
	for _, name := range names {
		if err := os.Remove(filepath.Join(skillDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	entries, err := os.ReadDir(skillDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return os.Remove(skillDir)
	}
	return nil
}
