// Package screen reads a terminal pane's styled text, as `tmux capture-pane -e` prints
// it, into lines of spans that a page can draw without ever treating the text as
// markup: each span is plain text with its colours and attributes beside it.
//
// capture-pane -e writes SGR sequences (CSI … m) between the characters; any other
// escape sequence (an OSC hyperlink of a newer tmux, a stray CSI) is skipped whole,
// and other control characters are dropped, so Plain of a parse is what capture-pane
// prints without -e. No library is used: the ones that parse ANSI in Go build width
// tables when the program starts (about 40 ms on this machine for
// charmbracelet/x/ansi), which every hook of the single ctx binary would pay.
package screen

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attributes of a span, as bits of Span.Attr.
const (
	Bold = 1 << iota
	Dim
	Italic
	Underline
	Inverse
	Hidden
	Strike
)

// Span is a run of text in one style. FG and BG are "#rrggbb", or "" for the
// terminal's default colour.
type Span struct {
	Text string `json:"t"`
	FG   string `json:"f,omitempty"`
	BG   string `json:"b,omitempty"`
	Attr uint8  `json:"a,omitempty"`
}

// Screen is a pane's lines, top first; a line is its spans, and an empty line has
// none.
type Screen [][]Span

// Plain is the screen's text without its styles, lines ended by "\n" but the last.
func (s Screen) Plain() string {
	var b strings.Builder
	for i, line := range s {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, sp := range line {
			b.WriteString(sp.Text)
		}
	}
	return b.String()
}

// style is the pen: what the next characters are drawn with.
type style struct {
	fg, bg string
	attr   uint8
}

// Parse reads capture-pane -e output. A trailing newline does not make an empty last
// line.
func Parse(s string) Screen {
	s = strings.TrimSuffix(s, "\n")
	var (
		out  Screen
		line []Span
		pen  style
		text strings.Builder
	)
	flush := func() {
		if text.Len() == 0 {
			return
		}
		sp := Span{Text: text.String(), FG: pen.fg, BG: pen.bg, Attr: pen.attr}
		text.Reset()
		if n := len(line); n > 0 && line[n-1].FG == sp.FG && line[n-1].BG == sp.BG && line[n-1].Attr == sp.Attr {
			line[n-1].Text += sp.Text
			return
		}
		line = append(line, sp)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			flush()
			out = append(out, line)
			line = nil
			i++
		case c == 0x1b:
			n, params, final := sequence(s[i:])
			if final == 'm' {
				flush()
				pen = pen.apply(params)
			}
			i += n
		case c == '\t':
			text.WriteByte(c)
			i++
		case c < 0x20 || c == 0x7f:
			i++ // a control character draws nothing
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				text.WriteRune(utf8.RuneError)
			} else {
				text.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	flush()
	return append(out, line)
}

// sequence measures the escape sequence s starts with: its length, and for a CSI its
// parameter bytes and final byte (0 for any other sequence). An unterminated
// sequence runs to the end of s.
func sequence(s string) (n int, params string, final byte) {
	if len(s) < 2 {
		return len(s), "", 0
	}
	switch s[1] {
	case '[': // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, a final 0x40–0x7e
		for j := 2; j < len(s); j++ {
			if b := s[j]; b >= 0x40 && b <= 0x7e {
				return j + 1, s[2:j], b
			} else if b < 0x20 {
				return j, "", 0 // broken: stop before the control character
			}
		}
		return len(s), "", 0
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST (ESC \)
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1, "", 0
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2, "", 0
			}
		}
		return len(s), "", 0
	default: // ESC and one byte (with intermediates): ESC ( B and the like
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		return min(j+1, len(s)), "", 0
	}
}

// apply changes the pen by an SGR's parameters ("1;38;2;215;119;87"; an empty list
// resets). Sub-parameters after ':' (38:2::r:g:b, 4:3) are read as the standard
// says.
func (p style) apply(params string) style {
	if params == "" {
		return style{}
	}
	fields := strings.Split(params, ";")
	for i := 0; i < len(fields); i++ {
		sub := strings.Split(fields[i], ":")
		code := number(sub[0])
		switch {
		case code == 0:
			p = style{}
		case code == 1:
			p.attr |= Bold
		case code == 2:
			p.attr |= Dim
		case code == 3:
			p.attr |= Italic
		case code == 4:
			p.attr |= Underline
			if len(sub) > 1 && number(sub[1]) == 0 {
				p.attr &^= Underline // 4:0 is no underline
			}
		case code == 7:
			p.attr |= Inverse
		case code == 8:
			p.attr |= Hidden
		case code == 9:
			p.attr |= Strike
		case code == 21:
			p.attr |= Underline // double underline, drawn as one
		case code == 22:
			p.attr &^= Bold | Dim
		case code == 23:
			p.attr &^= Italic
		case code == 24:
			p.attr &^= Underline
		case code == 27:
			p.attr &^= Inverse
		case code == 28:
			p.attr &^= Hidden
		case code == 29:
			p.attr &^= Strike
		case code >= 30 && code <= 37:
			p.fg = palette(code - 30)
		case code >= 90 && code <= 97:
			p.fg = palette(code - 90 + 8)
		case code == 39:
			p.fg = ""
		case code >= 40 && code <= 47:
			p.bg = palette(code - 40)
		case code >= 100 && code <= 107:
			p.bg = palette(code - 100 + 8)
		case code == 49:
			p.bg = ""
		case code == 38 || code == 48 || code == 58:
			var c string
			if len(sub) > 1 {
				c = extended(sub[1:], true)
			} else {
				var used int
				c, used = extendedFields(fields[i+1:])
				i += used
			}
			switch code {
			case 38:
				p.fg = c
			case 48:
				p.bg = c
			}
		}
	}
	return p
}

// extendedFields reads an extended colour given as ;-separated fields after 38/48
// (5;N or 2;R;G;B) and says how many fields it used.
func extendedFields(f []string) (string, int) {
	if len(f) == 0 {
		return "", 0
	}
	switch number(f[0]) {
	case 5:
		if len(f) < 2 {
			return "", len(f)
		}
		return extended(f[:2], false), 2
	case 2:
		if len(f) < 4 {
			return "", len(f)
		}
		return extended(f[:4], false), 4
	}
	return "", 1
}

// extended reads 5:N or 2:[colourspace:]R:G:B (withSpace: the colon form, whose
// direct colour may name a colour space before R).
func extended(f []string, withSpace bool) string {
	switch number(f[0]) {
	case 5:
		if len(f) >= 2 {
			return palette(number(f[1]))
		}
	case 2:
		rgb := f[1:]
		if withSpace && len(rgb) == 4 {
			rgb = rgb[1:]
		}
		if len(rgb) >= 3 {
			return hex(number(rgb[0]), number(rgb[1]), number(rgb[2]))
		}
	}
	return ""
}

// number is a parameter's value; empty or unreadable is 0.
func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// base16 are the first 16 colours, as xterm draws them.
var base16 = [16][3]int{
	{0, 0, 0}, {205, 49, 49}, {13, 188, 121}, {229, 229, 16}, {36, 114, 200}, {188, 63, 188}, {17, 168, 205}, {229, 229, 229},
	{102, 102, 102}, {241, 76, 76}, {35, 209, 139}, {245, 245, 67}, {59, 142, 234}, {214, 112, 214}, {41, 184, 219}, {255, 255, 255},
}

// palette is colour n of the 256-colour palette: 16 base colours, a 6×6×6 cube and
// 24 greys.
func palette(n int) string {
	switch {
	case n < 0 || n > 255:
		return ""
	case n < 16:
		c := base16[n]
		return hex(c[0], c[1], c[2])
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return hex(level(n/36), level(n/6%6), level(n%6))
	default:
		g := 8 + 10*(n-232)
		return hex(g, g, g)
	}
}

func hex(r, g, b int) string {
	const digits = "0123456789abcdef"
	out := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range [3]int{r, g, b} {
		v = max(0, min(255, v))
		out[1+2*i], out[2+2*i] = digits[v>>4], digits[v&15]
	}
	return string(out)
}
