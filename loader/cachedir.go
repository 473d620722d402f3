package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ctxtools/ctx/internal/durable"
)

// Where the listing's caches live: the project index, the folder cache and the steps
// cache. In a workspace with .ctx/ they are in .ctx/state; a workspace without it (a
// person's folder of projects that never ran ctx init) gets a folder of ctx's own in
// the user's cache folder, $XDG_CACHE_HOME/ctx/<hash of the resolved root>/, so that
// its warm listings are as fast and a listing still never writes into the person's
// folder. The caches carry the same stamps and keys either way. When the workspace
// later gets .ctx/, its caches move there.

// workspaceNote is the file in a user-cache folder that says which workspace it is for.
const workspaceNote = "workspace"

// CacheDir is the folder of the workspace's listing caches: .ctx/state, or the user
// cache's folder for a workspace without .ctx/; "" when there is neither (no home).
func (ws *Workspace) CacheDir() string {
	user := ws.userCacheDir()
	if !isDir(ws.StatePath()) {
		return user
	}
	state := ws.StatePath("state")
	move := func() {
		if user != "" && isDir(user) {
			moveCaches(user, state)
		}
	}
	if ws.cache != nil {
		ws.cache.move.Do(move) // once a process: a listing asks for each project
	} else {
		move()
	}
	return state
}

// cacheLocation is what CacheDir works out once per Workspace.
type cacheLocation struct {
	user    sync.Once
	userDir string
	move    sync.Once
}

// userCacheDir is the user-cache folder for this workspace, made or not.
func (ws *Workspace) userCacheDir() string {
	if ws.cache == nil {
		return ws.findUserCacheDir()
	}
	ws.cache.user.Do(func() { ws.cache.userDir = ws.findUserCacheDir() })
	return ws.cache.userDir
}

// findUserCacheDir works out userCacheDir: the user's cache folder, ctx, and a hash of
// the workspace's resolved root.
func (ws *Workspace) findUserCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(base) {
		return ""
	}
	root := ws.Root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(base, "ctx", hex.EncodeToString(sum[:8]))
}

// ensureCacheDir makes dir, the folder CacheDir named: .ctx/state with its
// .gitignore, or the user-cache folder (private, with a note of its workspace).
func (ws *Workspace) ensureCacheDir(dir string) error {
	if strings.HasPrefix(dir, ws.StatePath()+string(filepath.Separator)) {
		return EnsureStateDir(dir)
	}
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	note := filepath.Join(dir, workspaceNote)
	if _, err := os.Lstat(note); err == nil {
		return nil
	}
	return durable.ReplaceFile(note, []byte(ws.Root+"\n"), 0o600)
}

// moveCaches brings the caches a workspace kept in the user cache into its .ctx/state,
// where they are kept from now on, and removes the user-cache folder. A cache already in
// state stays; one that cannot be moved is dropped (the next listing remakes it).
func moveCaches(from, to string) {
	if EnsureStateDir(to) == nil {
		for _, name := range []string{IndexFile, FoldersFile, stepsDir} {
			if _, err := os.Lstat(filepath.Join(to, name)); err == nil {
				continue
			}
			_ = os.Rename(filepath.Join(from, name), filepath.Join(to, name))
		}
	}
	_ = os.RemoveAll(from)
}
