package main

import (
	"reflect"
	"testing"

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
