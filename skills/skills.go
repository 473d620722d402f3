// Package skills holds the Claude Code skills that ctx ships (SKILL.md files embedded in
// the binary) and installs them into a .claude/skills folder without overwriting a file
// the user has changed.
package skills

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

//go:embed files
var files embed.FS

// FileName is the name of a skill's file inside its folder.
const FileName = "SKILL.md"

// Limits of the Agent Skills specification, which Claude Code follows.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// namePattern is the specification's name rule: lowercase letters, digits and single
// hyphens between them.
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// reservedWords may not appear in a skill name on Anthropic's platform.
var reservedWords = []string{"anthropic", "claude"}

// Skill is one embedded skill.
type Skill struct {
	Name        string
	Description string
	Content     []byte
}

// All returns the embedded skills, parsed and validated, sorted by name. An error here
// is a bug in ctx's own files; the tests keep it from shipping.
func All() ([]Skill, error) {
	entries, err := fs.ReadDir(files, "files")
	if err != nil {
		return nil, fmt.Errorf("embedded skills: %w", err)
	}
	var skills []Skill
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := path.Join("files", e.Name(), FileName)
		content, err := files.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("embedded skill %s: %w", e.Name(), err))
			continue
		}
		name, desc, err := Validate(content)
		if err != nil {
			errs = append(errs, fmt.Errorf("embedded skill %s: %w", e.Name(), err))
			continue
		}
		if name != e.Name() {
			errs = append(errs, fmt.Errorf("embedded skill %s: name %q differs from its folder", e.Name(), name))
			continue
		}
		skills = append(skills, Skill{Name: name, Description: desc, Content: content})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(skills, func(i, j int) bool { return skills[i].Name < skills[j].Name })
	return skills, nil
}

// frontmatter is the part of a SKILL.md header that ctx checks; other keys Claude Code
// understands (allowed-tools, argument-hint, ...) are allowed and ignored.
type frontmatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Validate checks a SKILL.md file against the rules Claude Code and the Agent Skills
// specification set for its frontmatter and returns the skill's name and description.
func Validate(content []byte) (name, description string, err error) {
	header, err := splitFrontmatter(content)
	if err != nil {
		return "", "", err
	}
	var fm frontmatter
	if err := yaml.Unmarshal(header, &fm); err != nil {
		return "", "", fmt.Errorf("frontmatter: %w", err)
	}
	if err := validateName(fm.Name); err != nil {
		return "", "", err
	}
	if err := validateDescription(fm.Description); err != nil {
		return "", "", err
	}
	return fm.Name, fm.Description, nil
}

// splitFrontmatter returns the YAML between the opening "---" line, which must be the
// file's first line, and the next "---" line.
func splitFrontmatter(content []byte) ([]byte, error) {
	rest, ok := cutLine(content, "---")
	if !ok {
		return nil, errors.New("frontmatter: the file must start with a \"---\" line")
	}
	for off := 0; off < len(rest); {
		line, next := rest[off:], len(rest)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], off+i+1
		}
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			return rest[:off], nil
		}
		off = next
	}
	return nil, errors.New("frontmatter: no closing \"---\" line")
}

// cutLine reports whether content starts with the line want (ignoring trailing blanks
// and a carriage return) and returns what follows it.
func cutLine(content []byte, want string) ([]byte, bool) {
	line, rest, found := bytes.Cut(content, []byte("\n"))
	if !found || string(bytes.TrimRight(line, " \t\r")) != want {
		return nil, false
	}
	return rest, true
}

func validateName(name string) error {
	switch {
	case name == "":
		return errors.New("frontmatter: name is missing")
	case len(name) > MaxNameLen:
		return fmt.Errorf("frontmatter: name %q is %d characters long, more than %d", name, len(name), MaxNameLen)
	case !namePattern().MatchString(name):
		return fmt.Errorf("frontmatter: name %q may hold only lowercase letters, digits and single hyphens between them", name)
	}
	for _, w := range reservedWords {
		if strings.Contains(name, w) {
			return fmt.Errorf("frontmatter: name %q contains the reserved word %q", name, w)
		}
	}
	return nil
}

func validateDescription(desc string) error {
	n := utf8.RuneCountInString(desc)
	switch {
	case strings.TrimSpace(desc) == "":
		return errors.New("frontmatter: description is missing")
	case n > MaxDescriptionLen:
		return fmt.Errorf("frontmatter: description is %d characters long, more than %d", n, MaxDescriptionLen)
	case strings.ContainsAny(desc, "<>"):
		// The description is put into the agent's prompt inside XML-like tags.
		return errors.New("frontmatter: description may not contain \"<\" or \">\"")
	}
	return nil
}
