// Package shquote quotes words for a POSIX shell: a word that needs no quotes stays as it
// is, any other is single-quoted. Every command line ctx writes for a shell to read (a
// launch script, a command run over ssh, a shell-out the guard rebuilds) goes through it.
package shquote

import "strings"

// Quote returns s as one shell word.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, needsQuote) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces: one command line.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// needsQuote reports a character a shell word holds only quoted.
func needsQuote(r rune) bool {
	plain := r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == ',' || r == '@' || r == '+' ||
		r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	return !plain
}
