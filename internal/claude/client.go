package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxtools/ctx/usage"
)

// ProvenClaudeVersion is the newest Claude Code release the end-to-end suite passed
// against (docs/compatibility.md). The suite installs exactly this version, so it is
// named once, here.
const ProvenClaudeVersion = "2.1.330"

// ClientVersion reads the version from `claude --version` output ("2.1.330 (Claude
// Code)"); ok is false when the output does not start with one.
func ClientVersion(output string) (version string, ok bool) {
	fields := strings.Fields(output)
	if len(fields) == 0 {
		return "", false
	}
	if _, ok := parseVersion(fields[0]); !ok {
		return "", false
	}
	return fields[0], true
}

// NewerThanProven reports whether version is a later release than ProvenClaudeVersion.
func NewerThanProven(version string) bool {
	v, ok := parseVersion(version)
	if !ok {
		return false
	}
	p, _ := parseVersion(ProvenClaudeVersion)
	for i := range v {
		if v[i] != p[i] {
			return v[i] > p[i]
		}
	}
	return false
}

func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// Environment variables and settings keys of Claude Code that DetectClient reads.
const (
	envCompactWindow  = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
	envCompactPercent = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
	envDisableCompact = "DISABLE_AUTO_COMPACT"
	envDisable1M      = "CLAUDE_CODE_DISABLE_1M_CONTEXT"
	envModel          = "ANTHROPIC_MODEL"
	envClaudePID      = "CLAUDE_PID"
	envProjectDir     = "CLAUDE_PROJECT_DIR"
	keyCompactWindow  = "autoCompactWindow"
	keyModel          = "model"
	keyEnv            = "env"
	keyCompactEnabled = "autoCompactEnabled"
	flagModel         = "--model"
	flagCompactWindow = "--autocompact"
)

// DetectClient reads Claude Code's configuration as the running session sees it: the
// environment (getenv), the command line of the claude process ($CLAUDE_PID, set in
// hooks; Linux only), the settings files of projectDir (.claude/settings.local.json,
// then .claude/settings.json) and of the user (settings.json in ConfigDir, whose "env"
// values count as the environment's too), and the user's ~/.claude.json. For each value
// the environment wins, then the flag, then the settings in that order, except for the
// model, where --model wins over $ANTHROPIC_MODEL as in Claude Code. An empty projectDir
// is taken from $CLAUDE_PROJECT_DIR. Missing files are not problems; it never fails,
// and it reads a few small files, so every hook can afford it (about 80 µs with a 20 KB
// ~/.claude.json, BenchmarkDetectClient).
func DetectClient(getenv func(string) string, projectDir string) usage.Client {
	return detect(getenv, projectDir, "/proc")
}

// detect is DetectClient reading processes' command lines under proc.
func detect(getenv func(string) string, projectDir, proc string) usage.Client {
	if projectDir == "" {
		projectDir = getenv(envProjectDir)
	}
	var c usage.Client
	// Highest precedence first.
	var files []settingsFile
	levels := SettingsFiles(projectDir, getenv)
	for i := len(levels) - 1; i >= 0; i-- {
		files = append(files, readSettings(levels[i].Path, settingsLabel(levels[i].Level, getenv), &c.Problems))
	}
	// env looks a variable up in the environment, then in the settings' "env", which
	// Claude Code sets in its own: outside a session, only the settings say it.
	env := func(key string) (value, source string) {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v, "env " + key + "=" + v
		}
		for _, f := range files {
			if v := strings.TrimSpace(f.env[key]); v != "" {
				return v, "setting env." + key + "=" + v + " in " + f.label
			}
		}
		return "", ""
	}
	flags := claudeFlags(getenv(envClaudePID), proc)

	// The model: the flag wins over the environment here, as in Claude Code.
	if flags.model != "" {
		c.Model, c.ModelSource = flags.model, "flag "+flagModel
	} else if v, src := env(envModel); v != "" {
		c.Model, c.ModelSource = v, strings.Replace(src, "="+v, "", 1)
	} else {
		for _, f := range files {
			if f.model != "" {
				c.Model, c.ModelSource = f.model, "setting "+keyModel+" in "+f.label
				break
			}
		}
	}

	if v, src := env(envCompactWindow); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.CompactWindow, c.CompactWindowSource = n, src
		} else {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: want a number of tokens, ignored", src))
		}
	}
	if c.CompactWindow == 0 && flags.compactWindow != "" {
		if n, err := strconv.Atoi(flags.compactWindow); err == nil && n > 0 {
			c.CompactWindow, c.CompactWindowSource = n, "flag "+flagCompactWindow+" "+flags.compactWindow
		} else {
			c.Problems = append(c.Problems, fmt.Sprintf("flag %s %s: want a number of tokens, ignored", flagCompactWindow, flags.compactWindow))
		}
	}
	if c.CompactWindow == 0 {
		for _, f := range files {
			if f.compactWindow > 0 {
				c.CompactWindow, c.CompactWindowSource = f.compactWindow, "setting "+keyCompactWindow+" in "+f.label
				break
			}
		}
	}

	if v, src := env(envCompactPercent); v != "" {
		if p, err := strconv.ParseFloat(v, 64); err == nil && p > 0 && p <= 100 {
			c.CompactPercent, c.CompactPercentSource = p, src
		} else {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: want a percentage above 0 and at most 100, ignored", src))
		}
	}

	if v, src := env(envDisableCompact); truthy(v) {
		c.AutoCompactOff, c.AutoCompactOffSource = true, src
	} else if global, label := globalConfigPath(getenv); global != "" {
		if off, problem := autoCompactDisabled(global, label); problem != "" {
			c.Problems = append(c.Problems, problem)
		} else if off {
			c.AutoCompactOff, c.AutoCompactOffSource = true, keyCompactEnabled+" false in "+label
		}
	}

	if v, src := env(envDisable1M); truthy(v) {
		c.Disable1M, c.Disable1MSource = true, src
	}
	return c
}

// settingsLabel names a level's settings file in DetectClient's sources and problems.
func settingsLabel(level Level, getenv func(string) string) string {
	switch {
	case level == LevelLocal:
		return ".claude/settings.local.json"
	case level == LevelProject:
		return ".claude/settings.json"
	case getenv(EnvConfigDir) != "":
		return "$" + EnvConfigDir + "/settings.json"
	}
	return "~/.claude/settings.json"
}

// truthy is how Claude Code reads a boolean environment variable.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// settingsFile is the little of one Claude Code settings file that sets the context.
type settingsFile struct {
	label         string
	model         string
	compactWindow int
	env           map[string]string
}

// readSettings reads the file at path, label naming it in sources and problems. Each key
// is decoded on its own, so that one value of the wrong kind loses only itself.
func readSettings(path, label string, problems *[]string) settingsFile {
	f := settingsFile{label: label}
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			*problems = append(*problems, fmt.Sprintf("%s: %v", label, unwrapPath(err)))
		}
		return f
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		*problems = append(*problems, fmt.Sprintf("%s: not valid JSON, ignored: %v", label, err))
		return f
	}
	bad := func(key, want string) {
		*problems = append(*problems, fmt.Sprintf("%s: %s: want %s, ignored", label, key, want))
	}
	if raw, ok := keys[keyModel]; ok && json.Unmarshal(raw, &f.model) != nil {
		bad(keyModel, "a string")
	}
	if raw, ok := keys[keyCompactWindow]; ok {
		var n float64
		if json.Unmarshal(raw, &n) != nil || n <= 0 || n != math.Trunc(n) || n > usage.MaxTokens {
			bad(keyCompactWindow, "a whole number of tokens")
		} else {
			f.compactWindow = int(n)
		}
	}
	if raw, ok := keys[keyEnv]; ok && json.Unmarshal(raw, &f.env) != nil {
		f.env = nil
		bad(keyEnv, "an object of strings")
	}
	return f
}

// The key of ~/.claude.json that turns automatic compaction off, split for the search:
// bytes.Index is fastest from a byte that is rare in the file, and a capital C is rarer
// than a quote.
var (
	keyCompactEnabledHead = []byte(`"auto`)
	keyCompactEnabledTail = []byte(`CompactEnabled"`)
)

// autoCompactDisabled reports whether the global config at path says
// "autoCompactEnabled": false.
func autoCompactDisabled(path, label string) (off bool, problem string) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, ""
		}
		return false, fmt.Sprintf("%s: %v", label, unwrapPath(err))
	}
	off, ok := compactEnabledFalse(data)
	if !ok {
		return false, fmt.Sprintf("%s: %s: want true or false, ignored", label, keyCompactEnabled)
	}
	return off, ""
}

// compactEnabledFalse reports whether data, Claude Code's global config, sets
// "autoCompactEnabled" to false (the last one winning); ok is false when its value is
// not a boolean. That file holds every project's state and can grow to megabytes, so
// it is not decoded: the key is looked up as bytes. Inside a JSON string every quote is
// escaped, so the quoted key followed by a colon is a key; Claude Code writes it at the
// top level only.
func compactEnabledFalse(data []byte) (off, ok bool) {
	for rest, seen := data, 0; ; {
		i := bytes.Index(rest, keyCompactEnabledTail)
		if i < 0 {
			return off, true
		}
		key := seen + i
		rest, seen = rest[i+len(keyCompactEnabledTail):], key+len(keyCompactEnabledTail)
		if !bytes.HasSuffix(data[:key], keyCompactEnabledHead) {
			continue
		}
		after := bytes.TrimLeft(rest, " \t\r\n")
		if len(after) == 0 || after[0] != ':' {
			continue // the key's name as a value, not the key
		}
		after = bytes.TrimLeft(after[1:], " \t\r\n")
		switch {
		case bytes.HasPrefix(after, []byte("false")):
			off = true
		case bytes.HasPrefix(after, []byte("true")):
			off = false
		default:
			return false, false
		}
	}
}

// unwrapPath drops the path a *fs.PathError repeats: the label names the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// flags are the claude command-line flags that set the context.
type flags struct {
	model, compactWindow string
}

// claudeFlags reads the command line of the claude process pid (NUL-separated, under
// proc/pid/cmdline). No pid, another system or a process gone give no flags.
func claudeFlags(pid, proc string) flags {
	if !isPID(pid) {
		return flags{} // not a process id: never a path
	}
	data, err := os.ReadFile(filepath.Join(proc, pid, "cmdline"))
	if err != nil || len(data) == 0 {
		return flags{}
	}
	args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	return parseFlags(args[1:])
}

// parseFlags finds --model and --autocompact in claude's arguments, as "--flag value"
// or "--flag=value", the last one winning as in Claude Code, up to a "--" after which
// everything is the prompt.
func parseFlags(args []string) flags {
	var f flags
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, target := range []struct {
			name string
			dst  *string
		}{{flagModel, &f.model}, {flagCompactWindow, &f.compactWindow}} {
			if v, ok := strings.CutPrefix(a, target.name+"="); ok {
				*target.dst = v
			} else if a == target.name && i+1 < len(args) {
				i++
				*target.dst = args[i]
			}
		}
	}
	return f
}
