package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StaleDirAge is how old a temporary folder of BuildDir must be before RemoveStaleDirs
// deletes it though a process with its writer's id runs: that process has reused the id
// of a writer killed long ago (after a restart, say), or is a writer stuck so long that
// its rename failing is the lesser harm.
const StaleDirAge = time.Minute

// TempDirIn names a new temporary folder in parent: prefix, the process id and the
// time, so that two writers never share one.
func TempDirIn(parent, prefix string) string {
	return filepath.Join(parent, fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), time.Now().UnixNano()))
}

// BuildDir makes the folder dir whole or not at all: fill writes it in a temporary
// folder of the same parent (named by TempDirIn with prefix), which is synced and then
// renamed to dir. A dir that exists is refused with an error matching fs.ErrExist, as
// mkdir would (a rename would replace an empty folder). On any error the temporary
// folder is removed; a killed writer's is left for RemoveStaleDirs.
func BuildDir(dir, prefix string, fill func(tmp string) error) error {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = fs.ErrExist
		}
		return err
	}
	tmp := TempDirIn(filepath.Dir(dir), prefix)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	err := fill(tmp)
	if err == nil {
		err = SyncDir(tmp) // the entries of its subfolders
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp) // a half-made folder helps no one
	}
	return err
}

// RemoveStaleDirs removes the folders of parent whose names begin with prefix and that
// no BuildDir is filling: what killed BuildDirs left. A folder whose writer, named by
// its id in the folder's name (TempDirIn), no longer runs goes at once; any other once
// it is older than StaleDirAge at now.
func RemoveStaleDirs(parent, prefix string, now time.Time) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		stale := writerGone(e.Name())
		if !stale {
			fi, err := e.Info()
			stale = err == nil && now.Sub(fi.ModTime()) > StaleDirAge
		}
		if stale {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
