package guard

import (
	"strconv"
	"strings"
)

// maxCommandBytes bounds the script the guard parses, at any depth, and any string it
// builds from variables. Linux passes at most 128 KiB in one argument, so a longer
// `bash -c` command cannot run there anyway; and the parser's stack grows with the
// text (up to some hundreds of bytes of stack per byte of `$((1+1+...))`), so the bound
// also keeps the hook's memory in check.
const maxCommandBytes = 128 << 10

// maxNesting bounds the brackets, braces and parentheses open at once in a script. The
// parser recurses once or more for each, at several KiB of stack a level: a megabyte of
// "(((" would overflow the stack, a fatal error that no recover catches, and a crashed
// hook lets the command run. No real command nests this deeply.
const maxNesting = 200

// unjudgeable refuses src before parsing when it is too large or too deeply nested to
// parse safely, and says whether it did.
func (c *checker) unjudgeable(src string) bool {
	if len(src) > maxCommandBytes {
		c.deny(ruleUnjudgeable, "Refused this command: it is "+strconv.Itoa(len(src)>>10)+" KiB long, more than the "+
			strconv.Itoa(maxCommandBytes>>10)+" KiB the guard can judge; write long content to a file with the file-writing tool, or split the command into smaller ones.")
		return true
	}
	if nestingDepth(src) > maxNesting {
		c.deny(ruleUnjudgeable, "Refused this command: it nests brackets, braces or parentheses more than "+
			strconv.Itoa(maxNesting)+" levels deep, too deep to judge safely; split it into simpler commands.")
		return true
	}
	return false
}

// nestingDepth is an upper bound of how deeply src nests (, { and [, counted without
// regard to quoting: text in quotes can only make the count larger, never hide a level.
func nestingDepth(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			most = max(most, depth)
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return most
}

// denyUnparsed refuses text the parser rejected. bash runs a script's complete lines
// before it reaches a syntax error, and the parser may reject what bash would accept,
// so passing such text would let the guard be bypassed by a deliberate error; refusing
// it costs the agent nothing bash would not have refused. The reason carries the
// parser's message so that the agent can fix the syntax.
func (c *checker) denyUnparsed(err error) {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "`", "'")), " ")
	if len(msg) > 120 {
		msg = strings.ToValidUTF8(msg[:120], "") + "…"
	}
	c.deny(ruleUnjudgeable, "Refused this command: the guard could not parse it as bash ("+strings.TrimSuffix(msg, ".")+
		"), so it cannot tell what it would run; fix the syntax, or split it into simpler commands.")
}
