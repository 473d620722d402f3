package durable

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A folder of BuildDir whose writer was killed goes with the next sweep, however young;
// a live writer's stays, and so does a young folder whose name gives no writer.
func TestRemoveStaleDirsRemovesDeadWritersAtOnce(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	const prefix = ".ctx-new-"
	tests := []struct {
		name string
		gone bool
	}{
		{name: fmt.Sprintf("%s%d-%d", prefix, dead.Process.Pid, time.Now().UnixNano()), gone: true},
		// Agents build in folders named .ctx-tmp-agent-<id>-<pid>-<n> and sweep by the
		// prefix before the id.
		{name: fmt.Sprintf("%sa-x1-%d-7", prefix, dead.Process.Pid), gone: true},
		{name: fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), time.Now().UnixNano())},
		{name: prefix + "unnamed"},
		{name: fmt.Sprintf("other-%d-1", dead.Process.Pid)},
	}
	for _, tt := range tests {
		if err := os.MkdirAll(filepath.Join(parent, tt.name, "01-planning"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStaleDirs(parent, prefix, time.Now())
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(parent, tt.name))
		if gone := os.IsNotExist(err); gone != tt.gone {
			t.Errorf("%s: removed %v, want %v", tt.name, gone, tt.gone)
		}
	}

	// A minute on, a folder no live process can be filling goes too.
	RemoveStaleDirs(parent, prefix, time.Now().Add(2*StaleDirAge))
	if _, err := os.Stat(filepath.Join(parent, prefix+"unnamed")); !os.IsNotExist(err) {
		t.Errorf("an old folder without a writer's id stayed: %v", err)
	}
}
