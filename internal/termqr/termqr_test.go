package termqr

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"
)

// The oracle is another QR implementation (gozxing, a port of ZXing): the terminal
// drawing is turned back into pixels as a screen shows it, and must decode to the text.
func TestDecodesWithZXing(t *testing.T) {
	for _, text := range []string{
		"http://127.0.0.1:7177/login?t=" + strings.Repeat("0f", 32),
		"https://build-box.tail1234.ts.net/login?t=" + strings.Repeat("a9", 32),
	} {
		for _, ansi := range []bool{true, false} {
			lines, err := Lines(text, ansi)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				if w := len([]rune(stripANSI(l))); w > 80 {
					t.Errorf("a line of %d columns: wider than a terminal", w)
				}
			}
			got, err := decode(lines)
			if err != nil || got != text {
				t.Errorf("ansi=%v: decoded %q, %v; want %q", ansi, got, err, text)
			}
		}
	}
}

func stripANSI(s string) string {
	s = strings.ReplaceAll(s, "\x1b[30;47m", "")
	return strings.ReplaceAll(s, "\x1b[0m", "")
}

// decode draws each character cell as 2×2 modules of 4×4 pixels each (black for the
// dark half of a half block) and reads the image with ZXing.
func decode(lines []string) (string, error) {
	const px = 4
	cols := len([]rune(stripANSI(lines[0])))
	img := image.NewGray(image.Rect(0, 0, (cols+8)*px, (len(lines)*2+8)*px))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	set := func(mx, my int) {
		for dy := range px {
			for dx := range px {
				img.SetGray((mx+4)*px+dx, (my+4)*px+dy, color.Gray{})
			}
		}
	}
	for row, l := range lines {
		for x, r := range []rune(stripANSI(l)) {
			if r == '█' || r == '▀' {
				set(x, 2*row)
			}
			if r == '█' || r == '▄' {
				set(x, 2*row+1)
			}
		}
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	res, err := gzqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		return "", err
	}
	return res.GetText(), nil
}
