//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/ctxtools/ctx/internal/testkit/ctxbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	ctxbin.Cleanup()
	os.Exit(code)
}
