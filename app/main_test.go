package app

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimize is how much the fuzzing engine may spend minimizing each
// input, unless -test.fuzzminimizetime says otherwise: 100 calls.
//
// The engine's default is 60 s per input, spent both on crashers and on
// every new input that widens coverage. Its byte-slice minimizer is
// quadratic in the input's length (it tries removing every range), so an
// input of a few kilobytes, such as a mutated PDF, always uses the whole
// minute; a parser like pdfcpu's finds new coverage every few executions,
// so FuzzAssetPDF spent nearly all its time minimizing (about 15
// executions a minute). 100 calls keep the minimizer's cheap first passes
// (cutting the tail) at a fraction of a second an input.
const fuzzMinimize = "100x"

// TestMain sets the fuzzing engine's minimization budget (fuzzMinimize)
// when fuzzing and none was given.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		given := false
		flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
		if !given {
			if err := flag.Set("test.fuzzminimizetime", fuzzMinimize); err != nil {
				panic(err)
			}
		}
	}
	os.Exit(m.Run())
}
