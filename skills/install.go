package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxtools/ctx/internal/durable"
)

// ManifestName is the file, next to a skill's SKILL.md, that holds the hash of what ctx
// last wrote there. It lets Install tell a file an older ctx wrote (safe to replace)
// from one the user edited (kept).
const ManifestName = ".ctx-skill.sha256"

// What Install did with a skill.
const (
	ActionInstalled = "installed" // the file was missing and was written
	ActionUpdated   = "updated"   // an older ctx version's file (or, with force, the user's) was replaced
	ActionUnchanged = "unchanged" // the file already equals this version's
	ActionKept      = "kept"      // the user changed the file, so it was left alone
)

// What Status found for a skill.
const (
	StatusMissing  = "missing"  // no file
	StatusCurrent  = "current"  // equal to this version's file
	StatusOutdated = "outdated" // written by an older ctx version; Install updates it
	StatusChanged  = "changed"  // changed by the user; Install keeps it unless forced
)

// InstallResult is what Install did, or Status found, for one skill.
type InstallResult struct {
	Name   string
	Path   string // the SKILL.md file
	Action string // an Action… constant from Install, a Status… constant from Status
	Reason string // why, in words for a person: "changed by you", "written by an older ctx"
}

// Install writes each embedded skill to <dir>/<name>/SKILL.md, where dir is a project's
// or the user's .claude/skills folder. A file that differs from this version's is
// replaced only when an older ctx wrote it (its hash matches the manifest) or force is
// set; otherwise it is kept. dryRun reports the same results and writes nothing. A
// failure on one skill does not stop the others; the errors are joined.
func Install(dir string, force, dryRun bool) ([]InstallResult, error) {
	return eachSkill(func(s Skill) (InstallResult, error) { return install(dir, s, force, dryRun) })
}

// eachSkill runs do for every embedded skill, in name order. A failure on one skill
// does not stop the others; their errors are joined.
func eachSkill(do func(Skill) (InstallResult, error)) ([]InstallResult, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	results := make([]InstallResult, 0, len(all))
	var errs []error
	for _, s := range all {
		r, err := do(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, r)
	}
	return results, errors.Join(errs...)
}

func install(dir string, s Skill, force, dryRun bool) (InstallResult, error) {
	skillDir := filepath.Join(dir, s.Name)
	file := filepath.Join(skillDir, FileName)
	manifest := filepath.Join(skillDir, ManifestName)
	if dryRun {
		st, err := inspect(file, manifest, s)
		if err != nil {
			return InstallResult{}, err
		}
		return planned(st, force), nil
	}
	if err := durable.MkdirAll(skillDir, 0o755); err != nil {
		return InstallResult{}, err
	}
	var r InstallResult
	// Under the lock, so that two `ctx init` runs cannot both decide from the same
	// old state and one overwrite the file the other just judged.
	err := durable.WithOutsideLock(manifest, func() error {
		st, err := inspect(file, manifest, s)
		if err != nil {
			return err
		}
		r = planned(st, force)
		switch r.Action {
		case ActionInstalled, ActionUpdated:
			durable.RemoveStaleTemps(skillDir, FileName)
			if err := durable.WriteFile(file, s.Content, 0o644); err != nil {
				return err
			}
			return writeManifest(manifest, s.Content)
		case ActionUnchanged:
			// A file the user copied in by hand has no manifest yet; record it so that
			// a later ctx version can update it.
			if !st.manifestCurrent {
				return writeManifest(manifest, s.Content)
			}
		}
		return nil
	})
	if err != nil {
		return InstallResult{}, fmt.Errorf("install skill %s: %w", s.Name, err)
	}
	return r, nil
}

// Status reports, without writing anything, whether each embedded skill is missing,
// current, outdated (written by an older ctx) or changed by the user in dir.
func Status(dir string) ([]InstallResult, error) {
	return eachSkill(func(s Skill) (InstallResult, error) {
		skillDir := filepath.Join(dir, s.Name)
		st, err := inspect(filepath.Join(skillDir, FileName), filepath.Join(skillDir, ManifestName), s)
		if err != nil {
			return InstallResult{}, err
		}
		return st.result(), nil
	})
}

// state is what is on disk for one skill, compared with the embedded file.
type state struct {
	name, path      string
	status          string // a Status… constant
	manifestCurrent bool   // the manifest records the embedded file's hash
}

func (st state) result() InstallResult {
	r := InstallResult{Name: st.name, Path: st.path, Action: st.status}
	switch st.status {
	case StatusOutdated:
		r.Reason = "written by an older ctx"
	case StatusChanged:
		r.Reason = "changed by you"
	}
	return r
}

// planned turns what is on disk into what Install does about it.
func planned(st state, force bool) InstallResult {
	r := InstallResult{Name: st.name, Path: st.path}
	switch st.status {
	case StatusMissing:
		r.Action = ActionInstalled
	case StatusCurrent:
		r.Action = ActionUnchanged
	case StatusOutdated:
		r.Action, r.Reason = ActionUpdated, "written by an older ctx"
	case StatusChanged:
		if force {
			r.Action, r.Reason = ActionUpdated, "changed by you; replaced because of --force"
		} else {
			r.Action, r.Reason = ActionKept, "changed by you"
		}
	}
	return r
}

func inspect(file, manifest string, s Skill) (state, error) {
	st := state{name: s.Name, path: file}
	want := hash(s.Content)
	recorded, err := readManifest(manifest)
	if err != nil {
		return st, err
	}
	st.manifestCurrent = recorded == want
	got, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.status = StatusMissing
	case err != nil:
		return st, fmt.Errorf("read skill: %w", err)
	case bytes.Equal(got, s.Content):
		st.status = StatusCurrent
	case recorded != "" && hash(got) == recorded:
		st.status = StatusOutdated
	default:
		st.status = StatusChanged
	}
	return st, nil
}

func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readManifest returns the recorded hash, or "" when there is no manifest. A manifest
// that cannot be parsed counts as none: the file is then treated as the user's, which
// is the safe side.
func readManifest(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read skill manifest: %w", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return "", nil
	}
	if _, err := hex.DecodeString(fields[0]); err != nil || len(fields[0]) != 2*sha256.Size {
		return "", nil
	}
	return strings.ToLower(fields[0]), nil
}

// writeManifest records content's hash in the format of sha256sum, so that
// `sha256sum -c .ctx-skill.sha256` in the skill's folder checks the file by hand.
func writeManifest(path string, content []byte) error {
	durable.RemoveStaleTemps(filepath.Dir(path), filepath.Base(path))
	return durable.WriteFile(path, []byte(hash(content)+"  "+FileName+"\n"), 0o644)
}
