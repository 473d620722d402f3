package guard

import (
	"regexp"
	"strings"
	"sync"
)

// funcDef finds `name() { body }` in text that does not parse.
var funcDef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([^\s(){};|&<>]+)\s*\(\s*\)\s*\{([^}]*)\}`) })

// fallback looks at text the parser rejected for the two most catastrophic forms,
// spelled out literally: a fork bomb, and rm -r of /, ~ or $HOME. It only names the rule
// of the refusal: Check refuses all text that does not parse anyway (see denyUnparsed),
// because bash runs a script's complete lines before it reaches a syntax error.
func (c *checker) fallback(text string) {
	for _, m := range funcDef().FindAllStringSubmatch(text, -1) {
		name, body := m[1], m[2]
		if strings.Count(body, name) >= 2 && strings.ContainsAny(body, "|&") {
			c.deny(ruleForkBomb, "Refused this command: it contains a fork bomb, a function that keeps spawning copies of itself until the machine stops responding; there is no safe way to run it.")
			return
		}
	}
	segments := strings.FieldsFunc(text, func(r rune) bool {
		return strings.ContainsRune(";&|(){}`\n", r)
	})
	for _, seg := range segments {
		fields := strings.Fields(seg)
		for i, f := range fields {
			if commandName(strings.Trim(f, `"'\`)) != "rm" {
				continue
			}
			if rule := c.rmFields(fields[i+1:]); rule != "" {
				c.deny(rule, rmReason(rule, "this command", c.literalTarget(rule)))
				return
			}
		}
	}
}

// rmFields is the rule a textual rm command line breaks, if any.
func (c *checker) rmFields(fields []string) string {
	recursive := false
	var targets []string
	for _, f := range fields {
		f = strings.Trim(f, `"'\`)
		switch {
		case strings.HasPrefix(f, "--"):
			recursive = recursive || f == "--recursive"
			if f == "--no-preserve-root" {
				return ruleRmNoPreserveRoot
			}
		case strings.HasPrefix(f, "-"):
			recursive = recursive || strings.ContainsAny(f, "rR")
		default:
			targets = append(targets, f)
		}
	}
	if !recursive {
		return ""
	}
	home := c.rules.env.Home
	for _, t := range targets {
		switch t {
		case "/", "/*":
			return ruleRmRoot
		case "~", "~/", "~/*", "$HOME", "$HOME/", "$HOME/*", "${HOME}", "${HOME}/", "${HOME}/*":
			return ruleRmHome
		}
		if home != "" && (t == home || t == home+"/" || t == home+"/*") {
			return ruleRmHome
		}
	}
	return ""
}

func (c *checker) literalTarget(rule string) string {
	if rule == ruleRmHome {
		return c.rules.env.Home
	}
	return "/"
}
