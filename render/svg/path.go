package svg

import (
	"errors"
	"math"
	"strconv"

	"folio/render/vector"
)

// errPathBudget stops a path that would take the drawing past its
// command budget.
var errPathBudget = errors.New("too many path commands")

// numberScanner reads the numbers of path data and point lists: signs,
// decimals, exponents, separated by white space and commas or run
// together ("1-2.5.5").
type numberScanner struct {
	s string
	i int
}

func (n *numberScanner) skipSpace() {
	for n.i < len(n.s) {
		switch n.s[n.i] {
		case ' ', '\t', '\n', '\r', '\f':
			n.i++
		default:
			return
		}
	}
}

func (n *numberScanner) skipSep() {
	n.skipSpace()
	if n.i < len(n.s) && n.s[n.i] == ',' {
		n.i++
		n.skipSpace()
	}
}

// number reads one number; ok is false (and nothing is consumed) when
// none starts here.
func (n *numberScanner) number() (float64, bool) {
	n.skipSpace()
	start := n.i
	j := n.i
	if j < len(n.s) && (n.s[j] == '+' || n.s[j] == '-') {
		j++
	}
	digits := 0
	for j < len(n.s) && n.s[j] >= '0' && n.s[j] <= '9' {
		j++
		digits++
	}
	if j < len(n.s) && n.s[j] == '.' {
		j++
		for j < len(n.s) && n.s[j] >= '0' && n.s[j] <= '9' {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if j < len(n.s) && (n.s[j] == 'e' || n.s[j] == 'E') {
		k := j + 1
		if k < len(n.s) && (n.s[k] == '+' || n.s[k] == '-') {
			k++
		}
		e := k
		for k < len(n.s) && n.s[k] >= '0' && n.s[k] <= '9' {
			k++
		}
		if k > e {
			j = k
		}
	}
	v, err := strconv.ParseFloat(n.s[start:j], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	n.i = j
	n.skipSep()
	return v, true
}

// flag reads an arc flag: a single 0 or 1, which may run into the next number.
func (n *numberScanner) flag() (bool, bool) {
	n.skipSpace()
	if n.i < len(n.s) && (n.s[n.i] == '0' || n.s[n.i] == '1') {
		v := n.s[n.i] == '1'
		n.i++
		n.skipSep()
		return v, true
	}
	return false, false
}

// numbers reads a list of numbers (a points attribute), at most max.
func numbers(s string, max int) []float64 {
	n := numberScanner{s: s}
	var out []float64
	for len(out) < max {
		v, ok := n.number()
		if !ok {
			break
		}
		out = append(out, v)
	}
	return out
}

// parsePath reads SVG path data into p. As the specification says, an
// error ends the path where it happened: what came before is drawn. budget
// is the commands the drawing may still add.
func parsePath(d string, p *vector.Path, budget *int) error {
	n := numberScanner{s: d}
	var cmd, prev byte
	var lastCtrlX, lastCtrlY float64 // the last control point, for S and T
	for {
		n.skipSpace()
		if n.i >= len(n.s) {
			return nil
		}
		switch c := n.s[n.i]; {
		case isCommand(c):
			cmd = c
			n.i++
		case cmd == 0:
			return errors.New("path data must start with a command")
		case cmd == 'z' || cmd == 'Z':
			return errors.New("path data holds numbers after a closepath")
		case cmd == 'M':
			cmd = 'L' // numbers after a moveto are lineto
		case cmd == 'm':
			cmd = 'l'
		}
		if *budget <= 0 {
			return errPathBudget
		}
		*budget--
		lower := cmd | 0x20
		if lower == 'z' {
			p.Close()
			prev = cmd
			continue
		}
		var args [7]float64
		for k := 0; k < argCount[lower]; k++ {
			if lower == 'a' && (k == 3 || k == 4) {
				f, ok := n.flag()
				if !ok {
					return errors.New("path data has a bad arc flag")
				}
				if f {
					args[k] = 1
				}
				continue
			}
			v, ok := n.number()
			if !ok {
				return errors.New("path data ends a command early or holds something that is not a number")
			}
			args[k] = v
		}
		cx, cy := p.Current()
		ox, oy := 0.0, 0.0
		if cmd >= 'a' {
			ox, oy = cx, cy
		}
		switch lower {
		case 'm':
			p.MoveTo(ox+args[0], oy+args[1])
		case 'l':
			p.LineTo(ox+args[0], oy+args[1])
		case 'h':
			p.LineTo(ox+args[0], cy)
		case 'v':
			p.LineTo(cx, oy+args[0])
		case 'c':
			p.CubicTo(ox+args[0], oy+args[1], ox+args[2], oy+args[3], ox+args[4], oy+args[5])
			lastCtrlX, lastCtrlY = ox+args[2], oy+args[3]
		case 's':
			x1, y1 := cx, cy
			if prev|0x20 == 'c' || prev|0x20 == 's' {
				x1, y1 = 2*cx-lastCtrlX, 2*cy-lastCtrlY
			}
			p.CubicTo(x1, y1, ox+args[0], oy+args[1], ox+args[2], oy+args[3])
			lastCtrlX, lastCtrlY = ox+args[0], oy+args[1]
		case 'q':
			p.QuadTo(ox+args[0], oy+args[1], ox+args[2], oy+args[3])
			lastCtrlX, lastCtrlY = ox+args[0], oy+args[1]
		case 't':
			qx, qy := cx, cy
			if prev|0x20 == 'q' || prev|0x20 == 't' {
				qx, qy = 2*cx-lastCtrlX, 2*cy-lastCtrlY
			}
			p.QuadTo(qx, qy, ox+args[0], oy+args[1])
			lastCtrlX, lastCtrlY = qx, qy
		case 'a':
			p.ArcTo(args[0], args[1], args[2], args[3] != 0, args[4] != 0, ox+args[5], oy+args[6])
		}
		prev = cmd
	}
}

// argCount is the numbers each command takes.
var argCount = map[byte]int{'m': 2, 'l': 2, 'h': 1, 'v': 1, 'c': 6, 's': 4, 'q': 4, 't': 2, 'a': 7, 'z': 0}

func isCommand(c byte) bool {
	switch c | 0x20 {
	case 'm', 'l', 'h', 'v', 'c', 's', 'q', 't', 'a', 'z':
		return true
	}
	return false
}
