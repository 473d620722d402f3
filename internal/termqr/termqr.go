// Package termqr draws a QR code in a terminal, two modules to a character cell with
// the half blocks ▀ ▄ █, dark on light whatever the terminal's own colours, so that
// `ctx serve --qr` can hand its login URL to a phone's camera.
package termqr

import (
	"io"
	"strings"

	"rsc.io/qr"
)

// quiet is the light margin around the code, in modules (the standard asks for 4;
// scanners read 2 well and it keeps the code within 80 columns).
const quiet = 2

// Lines returns the code for text as lines of half blocks. With ansi, each line sets
// black on white and resets at its end; without, light modules are spaces and the
// code reads only on a light background.
func Lines(text string, ansi bool) ([]string, error) {
	code, err := qr.Encode(text, qr.L)
	if err != nil {
		return nil, err
	}
	dark := func(x, y int) bool {
		x, y = x-quiet, y-quiet
		return x >= 0 && y >= 0 && x < code.Size && y < code.Size && code.Black(x, y)
	}
	side := code.Size + 2*quiet
	var out []string
	for y := 0; y < side; y += 2 {
		var b strings.Builder
		if ansi {
			b.WriteString("\x1b[30;47m")
		}
		for x := range side {
			top, bottom := dark(x, y), y+1 < side && dark(x, y+1)
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteByte(' ')
			}
		}
		if ansi {
			b.WriteString("\x1b[0m")
		}
		out = append(out, b.String())
	}
	return out, nil
}

// Write writes Lines to w, each ended by a newline.
func Write(w io.Writer, text string, ansi bool) error {
	lines, err := Lines(text, ansi)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}
