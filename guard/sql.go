package guard

import (
	"regexp"
	"strings"
	"sync"
)

var sqlDrop = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bdrop\s+(?:temporary\s+)?(?:database|table|schema)\b`)
})

// sql refuses SQL that destroys data wholesale (DROP DATABASE, TABLE or SCHEMA; TRUNCATE;
// DELETE without WHERE) in any argument of a SQL client (its -c, -e, --command or
// --execute, or sqlite3's SQL operands, the option joined to its SQL or not) or in what
// it reads on stdin.
func (c *checker) sql(args []arg, in input, text string) {
	texts := make([]string, 0, len(args))
	for _, a := range args[1:] {
		texts = append(texts, a.s)
		// An option and its SQL in one word: -c'DELETE …', --command=…, -Q…, --query=….
		if strings.HasPrefix(a.s, "--") {
			if _, v, ok := strings.Cut(a.s, "="); ok {
				texts = append(texts, v)
			}
		} else if len(a.s) > 2 && a.s[0] == '-' {
			texts = append(texts, a.s[2:])
		}
	}
	if in.ok {
		texts = append(texts, in.text)
	}
	for _, t := range texts {
		if sqlDrop().MatchString(t) {
			c.deny(ruleSQLDrop, "Refused "+text+": it sends DROP DATABASE, TABLE or SCHEMA, which destroys data beyond recovery; ask the user to run it, or use a migration they can review and roll back.")
			return
		}
		for _, st := range sqlStatements(t) {
			switch strings.ToUpper(st[0]) {
			case "TRUNCATE":
				if len(st) > 1 {
					c.deny(ruleSQLTruncate, "Refused "+text+": it sends TRUNCATE, which empties a whole table at once beyond recovery; delete the specific rows with a WHERE clause, or ask the user to run it.")
					return
				}
			case "DELETE", "WITH":
				// WITH x AS (...) DELETE FROM t: the WHERE must follow the DELETE.
				if i := keyword(st, "DELETE"); i >= 0 && keyword(st[i:], "FROM") > 0 && keyword(st[i:], "WHERE") < 0 {
					c.deny(ruleSQLDeleteAll, "Refused "+text+": it sends DELETE"+deletedTable(st[i:])+" without a WHERE clause, which deletes every row beyond recovery; add a WHERE clause naming the rows to delete, or ask the user to run it.")
					return
				}
			}
		}
	}
}

// sqlStatements splits SQL text into statements at semicolons, each as its words:
// comments are dropped and a string literal becomes one placeholder word, so that a
// WHERE inside a comment or a string does not count. It reads any text without error;
// text that is not SQL simply yields words that match no rule.
func sqlStatements(text string) [][]string {
	var out [][]string
	var words []string
	var word strings.Builder
	flushWord := func() {
		if word.Len() > 0 {
			words = append(words, word.String())
			word.Reset()
		}
	}
	flushStatement := func() {
		flushWord()
		if len(words) > 0 {
			out = append(out, words)
			words = nil
		}
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '-' && strings.HasPrefix(text[i:], "--"):
			flushWord()
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case ch == '/' && strings.HasPrefix(text[i:], "/*"):
			flushWord()
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 3
			}
		case ch == '\'':
			flushWord()
			for i++; i < len(text); i++ {
				if text[i] == '\'' {
					if i+1 < len(text) && text[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
			words = append(words, "'…'")
		case ch == '"' || ch == '`':
			// A quoted identifier: one word, whatever it spells.
			flushWord()
			end := strings.IndexByte(text[i+1:], ch)
			if end < 0 {
				end = len(text) - i - 1
			}
			words = append(words, text[i:i+1+end]+string(ch))
			i += end + 1
		case ch == ';':
			flushStatement()
		case ch == '_' || ch == '.' || ch == '$' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= 0x80:
			word.WriteByte(ch)
		default:
			flushWord()
		}
	}
	flushStatement()
	return out
}

// keyword is the index of the first of words that is kw, in any case, or -1.
func keyword(words []string, kw string) int {
	for i, w := range words {
		if strings.EqualFold(w, kw) {
			return i
		}
	}
	return -1
}

// deletedTable names the table of a DELETE statement for a reason, as " FROM t".
func deletedTable(st []string) string {
	for i := 1; i+1 < len(st); i++ {
		if strings.EqualFold(st[i], "FROM") {
			return " FROM " + strings.Trim(st[i+1], "`\"")
		}
	}
	return ""
}
