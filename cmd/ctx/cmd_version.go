package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ctx version, the commit it was built from and the Go version",
		Long: `Print the ctx version (the one set at build time, else the module version),
then the module, the version-control commit it was built from (with "modified"
when the tree had uncommitted changes) and the Go toolchain. ctx --version
prints the same.`,
		Example: "  ctx version\n  ctx --version",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(app.Out, versionText())
			return err
		},
	}
}

// addVersionFlag makes `ctx --version` print what `ctx version` prints.
func addVersionFlag(root *cobra.Command) {
	root.Version = strings.TrimSuffix(versionText(), "\n")
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print the ctx version, commit and Go version")
}

// versionText is the text of `ctx version` for this binary.
func versionText() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, info, runtime.GOOS+"/"+runtime.GOARCH, runtime.Version())
}

// formatVersion renders the version: a first line "ctx VERSION OS/ARCH GO" that
// scripts may read, then the module, the commit and the toolchain, each on its own
// line, from the build info the Go toolchain stamps into the binary.
func formatVersion(ldflagsVersion string, info *debug.BuildInfo, platform, goVersion string) string {
	modPath, modVersion := "github.com/ctxtools/ctx", "(devel)"
	settings := map[string]string{}
	if info != nil {
		if info.Main.Path != "" {
			modPath = info.Main.Path
		}
		if info.Main.Version != "" {
			modVersion = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	v := modVersion
	if ldflagsVersion != "" {
		v = ldflagsVersion
	}
	commit := "unknown (not built from a version-control checkout)"
	if rev := settings["vcs.revision"]; rev != "" {
		commit = rev
		if t := settings["vcs.time"]; t != "" {
			commit += " " + t
		}
		if settings["vcs.modified"] == "true" {
			commit += " modified"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ctx %s %s %s\n", v, platform, goVersion)
	fmt.Fprintf(&b, "  module  %s %s\n", modPath, modVersion)
	fmt.Fprintf(&b, "  commit  %s\n", commit)
	fmt.Fprintf(&b, "  go      %s\n", goVersion)
	return b.String()
}
