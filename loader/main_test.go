package loader

import (
	"os"
	"testing"
)

// TestMain keeps the listing caches of the tests' workspaces without .ctx/ out of the
// user's own cache folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctx-loader-cache-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
