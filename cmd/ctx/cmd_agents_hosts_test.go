package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// A command forwarded to a host keeps its flags and its arguments, an argument that
// begins with '-' too, and leaves out --host and the workspace.
func TestForwardedArgs(t *testing.T) {
	cmd := &cobra.Command{Use: "send"}
	cmd.Flags().String("host", "", "")
	cmd.Flags().String("workspace", "", "")
	cmd.Flags().Bool("json", false, "")
	cmd.Flags().StringArray("file", nil, "")
	if err := cmd.Flags().Parse([]string{"--host", "build", "--workspace", "/w", "--json", "--file", "a b", "--file", "c"}); err != nil {
		t.Fatal(err)
	}
	got := forwardedArgs(cmd, []string{"far", "-not-a-flag"})
	want := []string{"agents", "send", "--file=a b", "--file=c", "--json=true", "--", "far", "-not-a-flag"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("forwarded %q, want %q", got, want)
	}
}

// linesThenClosed takes n lines, then fails as a pipe whose reader left.
type linesThenClosed struct {
	lines []string
	n     int
}

func (w *linesThenClosed) Write(p []byte) (int, error) {
	if len(w.lines) >= w.n {
		return 0, os.ErrClosed
	}
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

// ctx agents events --follow: a line at once, another at the heartbeat although
// nothing changed, and it ends at the next heartbeat once its reader has gone away.
func TestAgentsEventsFollowBeats(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "02-projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &linesThenClosed{n: 2}
	start := time.Now()
	code := Main([]string{"-w", root, "agents", "events", "--follow"}, Streams{Out: w, Err: io.Discard}, func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return t.TempDir()
		}
		return ""
	})
	took := time.Since(start)
	if code != 0 || len(w.lines) != 2 || !strings.HasPrefix(w.lines[0], `{"host":"local"`) {
		t.Fatalf("exit %d, lines %q", code, w.lines)
	}
	// The second line is the first heartbeat; the reader is gone at the next one.
	if took < 2*eventsHeartbeat-time.Second || took > 2*eventsHeartbeat+3*time.Second {
		t.Errorf("ended after %s, want two heartbeats (%s each)", took, eventsHeartbeat)
	}
	if code := Main([]string{"-w", root, "agents", "events", "--host", "build"}, Streams{Out: io.Discard, Err: io.Discard}, func(string) string { return "" }); code != exitInput {
		t.Errorf("events --host build: exit %d, want %d", code, exitInput)
	}
}
