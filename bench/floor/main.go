// Command floor links the libraries ctx is built on and does nothing: the start-up
// cost no ctx process can go below while it carries them (their package initialisation
// and the size of the binary). make bench times it beside ctx's hooks and a Go
// hello-world, so BENCHMARKS.md can say how much of a hook is ctx's own.
// TestFloorLinksWhatCtxLinks keeps the list equal to what ctx links.
package main

import (
	_ "embed"
	_ "encoding/json"
	_ "hash/fnv"
	_ "html/template"
	_ "net/http"
	_ "os/exec"
	_ "os/signal"
	_ "runtime/debug"

	_ "github.com/gofrs/flock"
	_ "github.com/spf13/cobra"
	_ "github.com/yuin/goldmark"
	_ "github.com/yuin/goldmark/extension/ast"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
	_ "mvdan.cc/sh/v3/syntax"
	_ "rsc.io/qr"
)

func main() {}
