package fpdf

import (
	"strconv"
	"strings"
)

// GradientStop is one colour of a Shading, at Offset from 0 to 1.
type GradientStop struct {
	Offset  float64
	R, G, B int
}

// Shading registers an axial (tp 2: coords x1 y1 x2 y2) or radial (tp 3:
// coords fx fy cx cy r, from the focus to the circle) shading whose colour
// runs through stops, extended past both ends, and returns the name the
// "sh" operator paints it with ("Sh2"). The coordinates are in the space
// current when it is painted. Added for Folio's vector drawings: fpdf's
// own gradients have two colours and paint a rectangle.
func (f *Fpdf) Shading(tp int, coords []float64, stops []GradientStop) string {
	if len(stops) == 0 || (tp == 2 && len(coords) < 4) || (tp == 3 && len(coords) < 5) {
		return ""
	}
	col := func(s GradientStop) string {
		return f.rgbColorValue(s.R, s.G, s.B, "", "").str
	}
	var fn strings.Builder
	if len(stops) == 1 {
		stops = append(stops, stops[0])
	}
	if len(stops) == 2 {
		fn.WriteString("<</FunctionType 2 /Domain [0 1] /C0 [" + col(stops[0]) + "] /C1 [" + col(stops[1]) + "] /N 1>>")
	} else {
		fn.WriteString("<</FunctionType 3 /Domain [0 1] /Functions [")
		for i := 0; i+1 < len(stops); i++ {
			fn.WriteString("<</FunctionType 2 /Domain [0 1] /C0 [" + col(stops[i]) + "] /C1 [" + col(stops[i+1]) + "] /N 1>>")
		}
		fn.WriteString("] /Bounds [")
		for i := 1; i+1 < len(stops); i++ {
			fn.WriteString(strconv.FormatFloat(stops[i].Offset, 'f', 5, 64) + " ")
		}
		fn.WriteString("] /Encode [")
		for i := 0; i+1 < len(stops); i++ {
			fn.WriteString("0 1 ")
		}
		fn.WriteString("]>>")
	}
	g := gradientType{tp: tp, fn: fn.String()}
	if tp == 2 {
		g.x1, g.y1, g.x2, g.y2 = coords[0], coords[1], coords[2], coords[3]
	} else {
		g.x1, g.y1, g.x2, g.y2, g.r = coords[0], coords[1], coords[2], coords[3], coords[4]
	}
	f.gradientList = append(f.gradientList, g)
	return "Sh" + strconv.Itoa(len(f.gradientList)-1)
}
