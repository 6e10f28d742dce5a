package checkout

import (
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSVG is a QR code drawn as one SVG path of its dark modules, inline in
// the page: sharp at any size, no image request, nothing for the CSP to
// allow.
type qrSVG struct {
	// Size is the side in modules, quiet zone included.
	Size int
	// Path is the dark modules as SVG path data (digits and M, h, v, z only).
	Path string
}

// qrOf encodes text (a payment URI) as a QR code with medium error
// correction, as the API's qr.png does.
func qrOf(text string) (qrSVG, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return qrSVG{}, err
	}
	bm := q.Bitmap() // with its four-module quiet zone
	var b strings.Builder
	for y, row := range bm {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			b.WriteString("M" + strconv.Itoa(x) + " " + strconv.Itoa(y) + "h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run
		}
	}
	return qrSVG{Size: len(bm), Path: b.String()}, nil
}
