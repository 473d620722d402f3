// Package termtext fits text to a terminal's width: a Writer that breaks long lines
// between words as they are written, and Reflow for prose such as help text.
package termtext

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Writer fits text to a width: a line wider than that breaks between words, and its
// continuation lines start under the column the line's text starts in (after a label
// such as "  stopped   " or a command name in help), so tables of labels stay
// readable at 80 columns and below. A word is never broken, so paths without spaces
// stay whole; nor is a code span in backticks (a command to copy); and a line with a
// tab (data: a shell's completions) is not fitted at all.
//
// Complete lines are fitted as they arrive; a partial line (a question waiting for
// its answer) is written at once, as it is, and the rest of that line too.
type Writer struct {
	w       io.Writer
	width   int
	pending []byte // the start of a line not yet ended
	raw     bool   // part of the current line went out unfitted
}

// NewWriter returns a Writer that fits what is written to it to width columns and
// writes it to w.
func NewWriter(w io.Writer, width int) *Writer { return &Writer{w: w, width: width} }

// Underlying is the writer f writes to, for output that must come out byte for byte.
func (f *Writer) Underlying() io.Writer { return f.w }

// Write fits the complete lines of p and writes them; see Writer.
func (f *Writer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		f.pending = append(f.pending, p[:i]...)
		line := f.pending
		f.pending = nil
		var err error
		if f.raw {
			_, err = f.w.Write(append(line, '\n'))
		} else {
			_, err = io.WriteString(f.w, fitLine(string(line), f.width))
		}
		f.raw = false
		if err != nil {
			return n - len(p), err
		}
		p = p[i+1:]
	}
	if len(p) > 0 {
		// A line without its end yet: hold it while it may still be fitted, but
		// never hold back what a person must see to answer (a question, a prompt).
		f.pending = append(f.pending, p...)
		if err := f.Flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush writes a held partial line as it is.
func (f *Writer) Flush() error {
	if len(f.pending) == 0 {
		return nil
	}
	_, err := f.w.Write(f.pending)
	f.pending = nil
	f.raw = true
	return err
}

// fitLine returns line, followed by a newline, broken between words so that no piece
// is wider than width columns (a word longer than that stays whole). Continuation
// lines are indented to the line's text column (see hangColumn). ANSI colour codes
// take no columns. A line with a tab is data for a program (tab-separated values, a
// shell's completions) and stays whole.
func fitLine(line string, width int) string {
	if width <= 0 || strings.Contains(line, "\t") || DisplayWidth(line) <= width {
		return line + "\n"
	}
	hang := hangColumn(line, width)
	var b strings.Builder
	col := 0
	start := true // at the start of an output line, before its first word
	for i := 0; i < len(line); {
		// One run of spaces, then one word.
		j := i
		for j < len(line) && line[j] == ' ' {
			j++
		}
		// A code span (`ctx load 1`, a command to copy) is one word: a line never
		// breaks inside one.
		k, code := j, false
		for k < len(line) && (code || line[k] != ' ') {
			if line[k] == '`' {
				code = !code
			}
			k++
		}
		spaces, word := line[i:j], line[j:k]
		ww := DisplayWidth(word)
		if !start && col+len(spaces)+ww > width && col > hang {
			b.WriteString("\n")
			b.WriteString(strings.Repeat(" ", hang))
			col = hang
			spaces = ""
		}
		b.WriteString(spaces)
		b.WriteString(word)
		col += len(spaces) + ww
		if word != "" {
			start = false
		}
		i = k
	}
	b.WriteString("\n")
	return b.String()
}

// hangColumn is the column continuation lines of line start in: after a list
// marker ("- ", "* ", "12. "), else where the line's text starts after its last
// label within maxHang columns (a run of two or more spaces after a word: "  stopped
// text", "ok    hooks      text", "  agents      text"), else the line's own
// indentation.
func hangColumn(line string, width int) int {
	plain := stripANSI(line)
	indent := len(plain) - len(strings.TrimLeft(plain, " "))
	if m := listMarker(plain[indent:]); m > 0 {
		return indent + m
	}
	hang := indent
	col := 0
	for i := 0; i < len(plain); {
		r, size := utf8.DecodeRuneInString(plain[i:])
		if r == ' ' && i > indent && i+1 < len(plain) && plain[i+1] == ' ' {
			j := i
			for j < len(plain) && plain[j] == ' ' {
				j++
			}
			gapEnd := col + (j - i)
			if gapEnd > min(width/2, maxHang) || j == len(plain) {
				break
			}
			hang = gapEnd
			col = gapEnd
			i = j
			continue
		}
		col++
		i += size
	}
	return hang
}

// maxHang is the widest label column continuation lines hang under.
const maxHang = 24

// listMarker returns the length of the list marker s starts with, with its space:
// "- ", "* " or a number and ". "; 0 for none.
func listMarker(s string) int {
	if strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") {
		return 2
	}
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && strings.HasPrefix(s[i:], ". ") {
		return i + 2
	}
	return 0
}

// IsFence reports whether line opens or closes a fenced code block (``` or ~~~),
// whose lines are code: kept as they are.
func IsFence(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// Reflow fits prose to width: a paragraph (lines of the same indentation, each but the
// first neither a list item nor a table row) with a line wider than width is joined
// and broken again between words. Paragraphs that fit keep their author's line
// breaks, so at 80 columns and above the text is unchanged.
func Reflow(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	fenced := false
	for i := 0; i < len(lines); {
		if IsFence(lines[i]) || fenced {
			if IsFence(lines[i]) {
				fenced = !fenced
			}
			out = append(out, lines[i]) // code keeps its lines
			i++
			continue
		}
		j := i + 1
		indent := indentOf(lines[i])
		for startsParagraph(lines[i]) && j < len(lines) && continuesParagraph(lines[j], indent) {
			j++
		}
		para := lines[i:j]
		wide := false
		for _, l := range para {
			wide = wide || DisplayWidth(l) > width
		}
		if !wide || len(para) == 1 {
			for _, l := range para {
				out = append(out, strings.TrimSuffix(fitLine(l, width), "\n"))
			}
		} else {
			words := make([]string, 0, len(para))
			for _, l := range para {
				words = append(words, strings.TrimSpace(l))
			}
			joined := strings.Repeat(" ", indent) + strings.Join(words, " ")
			out = append(out, strings.TrimSuffix(fitLine(joined, width), "\n"))
		}
		i = j
	}
	return strings.Join(out, "\n")
}

// startsParagraph reports whether line may begin a paragraph that goes on on the
// next lines: it is text, not a table row, a heading, a quote or a table.
func startsParagraph(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && !isTableRow(line) && !strings.ContainsAny(t[:1], "#>|")
}

// continuesParagraph reports whether line goes on the paragraph whose lines are
// indented by indent.
func continuesParagraph(line string, indent int) bool {
	t := strings.TrimSpace(line)
	return startsParagraph(line) && indentOf(line) == indent && listMarker(t) == 0 && !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~")
}

// isTableRow reports whether a line is laid out in columns (two spaces or more
// between words), which must keep its own line.
func isTableRow(line string) bool {
	return strings.Contains(strings.TrimSpace(line), "  ")
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// displayWidth is the number of terminal columns s takes: one per rune, none for
// ANSI escape sequences.
func DisplayWidth(s string) int {
	return utf8.RuneCountInString(stripANSI(s))
}

// stripANSI removes ANSI CSI sequences (colours) from s.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
