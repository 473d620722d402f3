package guard

import (
	"path"
	"strings"
)

// overwriteReason refuses emptying or replacing a file in place.
func overwriteReason(text, p, what string) string {
	return "Refused " + text + ": it overwrites " + p + ", " + what + ", in place, with no copy to go back to; change it with the file-editing tool (or, for a save point, `ctx save --summary \"...\"`), or append with >> instead."
}

// truncate refuses truncate of a file in the workspace or the home folder, or of a save
// point anywhere, unless it only grows the file (a size of +N, >N or %N) or the file is
// a generated one such as build.log. truncate -s 0 on a file in /tmp is everyday
// housekeeping; on a file of the user's it empties work in place.
func (c *checker) truncate(args []arg, sc *scope, text string) {
	shrinks := false
	var files []arg
	opts := true
	for j := 1; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case !a.known || !opts || !strings.HasPrefix(s, "-") || s == "-":
			files = append(files, a)
		case s == "--":
			opts = false
		case strings.HasPrefix(s, "--"):
			name, value, hasValue := strings.Cut(s[2:], "=")
			if (name == "size" || name == "reference") && !hasValue && j+1 < len(args) {
				j++
				value = args[j].s
				if !args[j].known {
					value = ""
				}
			}
			switch name {
			case "size":
				shrinks = shrinks || sizeShrinks(value)
			case "reference":
				shrinks = true
			}
		default:
			for k := 1; k < len(s); k++ {
				if s[k] != 's' && s[k] != 'r' {
					continue
				}
				value := s[k+1:]
				if value == "" && j+1 < len(args) {
					j++
					value = args[j].s
					if !args[j].known {
						value = ""
					}
				}
				shrinks = shrinks || s[k] == 'r' || sizeShrinks(value)
				break
			}
		}
	}
	if !shrinks {
		return
	}
	home, ws := c.rules.env.Home, c.rules.env.Workspace
	for _, f := range files {
		if !f.known {
			continue
		}
		if p, what := c.savePoint(f.s, sc); what != "" {
			c.deny(ruleOverwriteInPlace, overwriteReason(text, p, what))
			return
		}
		p := sc.abs(f.s)
		if p == "" || generatedFile(path.Base(p)) {
			continue
		}
		for _, root := range []string{ws, home} {
			if _, ok := inside(root, p); ok && root != "" && root != "/" {
				c.deny(ruleOverwriteInPlace, "Refused "+text+": it cuts "+p+" down in place, and whatever it held is gone with no copy to go back to; change the file with the file-editing tool, or truncate a copy in /tmp instead.")
				return
			}
		}
	}
}

// sizeShrinks reports whether a truncate size may make a file smaller: any size but
// one that only extends it (+N, >N, %N). An unknown size counts as shrinking.
func sizeShrinks(size string) bool {
	return size == "" || !strings.ContainsAny(size[:1], "+>%")
}

// shred refuses shred of anything: its whole purpose is that nothing be recovered.
func (c *checker) shred(args []arg, text string) {
	opts := true
	for j := 1; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case a.known && opts && s == "--":
			opts = false
		case a.known && opts && (s == "-n" || s == "-s" || s == "--iterations" || s == "--size" || s == "--random-source"):
			j++
		case a.known && opts && strings.HasPrefix(s, "-") && s != "-":
		default:
			c.deny(ruleOverwriteInPlace, "Refused "+text+": shred overwrites the file's contents so that nothing, not even a backup tool, can recover them; delete the file with rm if it must go, or ask the user.")
			return
		}
	}
}
