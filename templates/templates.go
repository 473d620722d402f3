// Package templates holds the embedded templates of the files ctx creates, and finds a
// workspace's overrides of them in .ctx/templates/.
package templates

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

//go:embed files/*.tmpl
var embedded embed.FS

// Names of the templates, as files in the embedded set and in .ctx/templates/.
const (
	Resume   = "resume.md.tmpl"
	Overview = "overview.md.tmpl"
	Plan     = "plan.md.tmpl"
	Steps    = "steps.md.tmpl"
)

// Names lists every template.
func Names() []string { return []string{Resume, Overview, Plan, Steps} }

// Project is the project data templates see.
type Project struct {
	ID          string
	Number      int
	Name        string
	Status      string
	Description string
}

// Progress is the steps-file progress templates see.
type Progress struct {
	TasksTotal           int
	TasksCompleted       int
	Percent              int
	CurrentTask          string
	CurrentSection       string
	CurrentTaskNumber    int
	CurrentSectionNumber int
}

// Data is what a template is rendered with.
type Data struct {
	Project     Project
	Progress    Progress
	Now         string // RFC 3339 timestamp
	Today       string // YYYY-MM-DD
	Phase       string
	LastSession string
	NextAction  string
}

// Set finds templates: a workspace override in Dir when one exists, else the embedded one.
type Set struct {
	Dir string // the workspace's .ctx/templates ("" for embedded only)
}

// Source returns the text of the named template and where it came from ("embedded" or
// the override's path).
func (s Set) Source(name string) ([]byte, string, error) {
	if !validName(name) {
		return nil, "", fmt.Errorf("template %q: unknown", name)
	}
	if s.Dir != "" {
		path := filepath.Join(s.Dir, name)
		data, err := os.ReadFile(path)
		if err == nil {
			return data, path, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("template %s: %w", path, err)
		}
	}
	data, err := embedded.ReadFile("files/" + name)
	if err != nil {
		return nil, "", fmt.Errorf("template %s: %w", name, err)
	}
	return data, "embedded", nil
}

func validName(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Render renders the named template with data.
func (s Set) Render(name string, data Data) ([]byte, error) {
	src, from, err := s.Source(name)
	if err != nil {
		return nil, err
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{"yaml": yamlScalar}).Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", from, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("template %s: %w", from, err)
	}
	return b.Bytes(), nil
}

// yamlScalar writes a string as a YAML scalar: plain when that reads back as the same
// string, quoted otherwise ("" for empty).
func yamlScalar(s string) string {
	if s == "" {
		return `""`
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	text := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(text, "\n") {
		out, _ = yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle})
		text = strings.TrimSuffix(string(out), "\n")
	}
	return text
}
