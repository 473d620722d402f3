package main

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ctxtools/ctx/internal/testkit/fixture"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ctx": func() { os.Exit(Main(os.Args[1:], SystemStreams(), os.Getenv)) },
	})
}

// wideColumns is $COLUMNS for a ctx run by a test that matches whole lines of its
// output, so that none is fitted to the pipe's 80 columns.
const wideColumns = "1000"

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			// Under -race every process sleeps a second at exit by default, waiting for
			// reports from goroutines; the scripts start hundreds of ctx processes.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// In a pipe ctx fits its text to 80 columns, and where a line breaks
			// depends on how long $WORK is on this machine: the scripts read whole
			// lines. pipe_width.txtar, and the tests in pipe_width_test.go, fit.
			env.Setenv("COLUMNS", wideColumns)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"json":       cmdJSON,
			"mkfifo":     cmdMkfifo,
			"bigfile":    cmdBigfile,
			"transcript": cmdTranscript,
			"boundary":   cmdBoundary,
			"digest":     cmdDigest,
		},
	})
}

// cmdJSON asserts on JSON output: `json FILE PATH [VALUE]` where FILE is a file or
// "stdout", PATH is dotted (project.progress.percent, recommended_reads.0.path, or
// "len:key" for the length of a list), and VALUE is compared with the value's JSON text
// (strings without quotes). Without VALUE it asserts that PATH exists.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: json FILE PATH [VALUE]")
	}
	data := ts.ReadFile(args[0])
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	got, ok := jsonPath(v, args[1])
	if len(args) == 2 {
		if ok == neg {
			ts.Fatalf("json %s: exists = %v", args[1], ok)
		}
		return
	}
	text := ""
	if ok {
		if s, isString := got.(string); isString {
			text = s
		} else {
			b, _ := json.Marshal(got)
			text = string(b)
		}
	}
	if (ok && text == args[2]) == neg {
		ts.Fatalf("json %s = %q (exists %v), want %s%q", args[1], text, ok, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

func jsonPath(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		if key, isLen := strings.CutPrefix(part, "len:"); isLen {
			list, ok := lookup(v, key)
			items, isList := list.([]any)
			if !ok || !isList {
				return nil, false
			}
			v = float64(len(items))
			continue
		}
		var ok bool
		if v, ok = lookup(v, part); !ok {
			return nil, false
		}
	}
	return v, true
}

func lookup(v any, key string) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		x, ok := t[key]
		return x, ok
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(t) {
			return nil, false
		}
		return t[i], true
	}
	return nil, false
}

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		if err := os.MkdirAll(filepath.Dir(ts.MkAbs(a)), 0o755); err != nil {
			ts.Fatalf("mkfifo: %v", err)
		}
		if err := syscall.Mkfifo(ts.MkAbs(a), 0o644); err != nil {
			ts.Fatalf("mkfifo: %v", err)
		}
	}
}

// cmdBigfile writes `bigfile FILE MB`: a steps file of that many megabytes of tasks.
func cmdBigfile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: bigfile FILE MB")
	}
	mb, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("bigfile: %v", err)
	}
	line := []byte("- [ ] a task line that is fairly ordinary\n")
	if err := os.MkdirAll(filepath.Dir(ts.MkAbs(args[0])), 0o755); err != nil {
		ts.Fatalf("bigfile: %v", err)
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("bigfile: %v", err)
	}
	defer f.Close()
	chunk := []byte(strings.Repeat(string(line), 1<<20/len(line)))
	for written := 0; written < mb<<20; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			ts.Fatalf("bigfile: %v", err)
		}
	}
	if err := f.Truncate(int64(mb) << 20); err != nil {
		ts.Fatalf("bigfile: %v", err)
	}
}

// cmdTranscript writes `transcript FILE TOKENS [compact]`: a small realistic Claude Code
// transcript whose latest main-chain usage is TOKENS, or that ends in a compaction
// boundary with TOKENS as its postTokens.
func cmdTranscript(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: transcript FILE TOKENS [compact | after BYTES]")
	}
	tokens, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("transcript: %v", err)
	}
	o := fixture.TranscriptOptions{Bytes: 40 << 10, FinalTokens: tokens}
	switch {
	case len(args) > 2 && args[2] == "compact":
		o = fixture.TranscriptOptions{Bytes: 40 << 10, FinalTokens: 150_000, CompactBoundaryAtEnd: true, PostTokens: tokens}
	case len(args) > 3 && args[2] == "after":
		// A tool result of BYTES after the last assistant line: how far back usage is.
		if o.HugeToolResultAfter, err = strconv.Atoi(args[3]); err != nil {
			ts.Fatalf("transcript: %v", err)
		}
	}
	if err := fixture.WriteTranscript(ts.MkAbs(args[0]), o); err != nil {
		ts.Fatalf("transcript: %v", err)
	}
}

// cmdBoundary appends a compaction's compact_boundary line to a transcript, as Claude
// Code 2.1.330 writes it: `boundary FILE UUID TIMESTAMP POSTTOKENS`.
func cmdBoundary(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: boundary FILE UUID TIMESTAMP POSTTOKENS")
	}
	line := fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","level":"info","compactMetadata":{"trigger":"auto","preTokens":160000,"postTokens":%s},"uuid":%q,"timestamp":%q}`+"\n", args[3], args[1], args[2])
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		ts.Fatalf("boundary: %v", err)
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		ts.Fatalf("boundary: %v", err)
	}
}

// cmdDigest writes `digest FILE DIR...`: digestTree of each DIR. `cmp` of two digests
// shows whether anything on disk changed, even a file rewritten with the same bytes or a
// temporary file removed again.
func cmdDigest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: digest FILE DIR...")
	}
	var b strings.Builder
	for _, dir := range args[1:] {
		if err := digestTree(&b, dir, ts.MkAbs(dir)); err != nil {
			ts.Fatalf("digest: %v", err)
		}
	}
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644); err != nil {
		ts.Fatalf("digest: %v", err)
	}
}

// digestTree writes to b a line for every file, folder and link under root (and one for
// a root that does not exist), named from name down: its mode, modification time, size
// and a hash of its content or the link's target. The tests that prove a command wrote
// nothing compare two of them.
func digestTree(b *strings.Builder, name, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if path == root && errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(b, "%s absent\n", name)
			return nil
		}
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		line := fmt.Sprintf("%s %v %d %d", filepath.ToSlash(filepath.Join(name, rel)), info.Mode(), info.ModTime().UnixNano(), info.Size())
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		b.WriteString(line + "\n")
		return nil
	})
}

// treeDigest is digestTree of dir, for a test.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	if err := digestTree(&b, ".", dir); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
