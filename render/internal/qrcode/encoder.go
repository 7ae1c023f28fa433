// go-qrcode
// Copyright 2014 Tom Harwood

package qrcode

import "errors"

// Data encoding.
//
// The main data portion of a QR Code consists of one or more segments of data.
// A segment consists of:
//
// - The segment Data Mode: numeric, alphanumeric, or byte.
// - The length of segment in bits.
// - Encoded data.
//
// For example, the string "123ZZ#!#!" may be represented as:
//
// [numeric, 3, "123"] [alphanumeric, 2, "ZZ"] [byte, 4, "#!#!"]
//
// Multiple data modes exist to minimise the size of encoded data. For example,
// 8-bit bytes require 8 bits to encode each, but base 10 numeric data can be
// encoded at a higher density of 3 numbers (e.g. 123) per 10 bits.
//
// Some data can be represented in multiple modes. Numeric data can be
// represented in all three modes, whereas alphanumeric data (e.g. 'A') can be
// represented in alphanumeric and byte mode.
//
// Starting a new segment (to use a different Data Mode) has a cost, the bits to
// state the new segment Data Mode and length. To minimise each QR Code's symbol
// size, an optimisation routine coalesces segment types where possible, to
// reduce the encoded data length.
//
// There are several other data modes available (e.g. Kanji mode) which are not
// implemented here.
//
// This is upstream's algorithm unchanged (the chosen segments, and so the
// symbol, are the same); segments are ranges of the input instead of copies,
// and the bits go to a bitBuffer.

// A segment encoding mode.
type dataMode uint8

const (
	// Each dataMode is a subset of the subsequent dataMode:
	// dataModeNone < dataModeNumeric < dataModeAlphanumeric < dataModeByte
	//
	// This ordering is important for determining which data modes a character can
	// be encoded with. E.g. 'E' can be encoded in both dataModeAlphanumeric and
	// dataModeByte.
	dataModeNone dataMode = 1 << iota
	dataModeNumeric
	dataModeAlphanumeric
	dataModeByte
)

type dataEncoderType uint8

const (
	dataEncoderType1To9 dataEncoderType = iota
	dataEncoderType10To26
	dataEncoderType27To40
)

// segment is a single segment of data: data[start:end] in dataMode.
type segment struct {
	dataMode   dataMode
	start, end int
}

// A dataEncoder encodes data for a particular QR Code version.
type dataEncoder struct {
	// Minimum & maximum versions supported.
	minVersion int
	maxVersion int

	// Character count lengths.
	numNumericCharCountBits      int
	numAlphanumericCharCountBits int
	numByteCharCountBits         int
}

// modeIndicatorBits is the length of a segment's mode indicator (0001, 0010
// or 0100).
const modeIndicatorBits = 4

var dataEncoders = [...]dataEncoder{
	dataEncoderType1To9: {
		minVersion:                   1,
		maxVersion:                   9,
		numNumericCharCountBits:      10,
		numAlphanumericCharCountBits: 9,
		numByteCharCountBits:         8,
	},
	dataEncoderType10To26: {
		minVersion:                   10,
		maxVersion:                   26,
		numNumericCharCountBits:      12,
		numAlphanumericCharCountBits: 11,
		numByteCharCountBits:         16,
	},
	dataEncoderType27To40: {
		minVersion:                   27,
		maxVersion:                   40,
		numNumericCharCountBits:      14,
		numAlphanumericCharCountBits: 13,
		numByteCharCountBits:         16,
	},
}

var (
	errNoData  = errors.New("no data to encode")
	errTooLong = errors.New("length too long to be represented")
)

// charClass is the least data mode of each byte value.
var charClass = func() (c [256]dataMode) {
	for v := range c {
		switch {
		case v >= 0x30 && v <= 0x39:
			c[v] = dataModeNumeric
		case v == 0x20 || v == 0x24 || v == 0x25 || v == 0x2a || v == 0x2b || v ==
			0x2d || v == 0x2e || v == 0x2f || v == 0x3a || (v >= 0x41 && v <= 0x5a):
			c[v] = dataModeAlphanumeric
		default:
			c[v] = dataModeByte
		}
	}
	return c
}()

// alphanumericValue is the QR Code value (0–44) of each alphanumeric
// character: 0-9, A-Z, SP, $%*+-./ and :.
var alphanumericValue = func() (a [256]uint8) {
	for i, c := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:" {
		a[c] = uint8(i)
	}
	return a
}()

// encode data as one or more segments and appends the encoded data to out
// (emptied first); actual and optimised are scratch space, returned for
// reuse.
//
// The encoded data does not include the terminator bit sequence.
func (d *dataEncoder) encode(data string, out *bitBuffer, actual, optimised []segment) ([]segment, []segment, error) {
	out.reset()
	if len(data) == 0 {
		return actual, optimised, errNoData
	}

	// Classify data into unoptimised segments.
	actual, highestRequiredMode := classifyDataModes(data, actual[:0])

	// Optimise segments.
	optimised, err := d.optimiseDataModes(actual, optimised[:0])
	if err != nil {
		return actual, optimised, err
	}

	// Check if a single byte encoded segment would be more efficient.
	optimizedLength := 0
	for _, s := range optimised {
		length, err := d.encodedLength(s.dataMode, s.end-s.start)
		if err != nil {
			return actual, optimised, err
		}
		optimizedLength += length
	}

	singleByteSegmentLength, err := d.encodedLength(highestRequiredMode, len(data))
	if err != nil {
		return actual, optimised, err
	}

	if singleByteSegmentLength <= optimizedLength {
		optimised = append(optimised[:0], segment{dataMode: highestRequiredMode, start: 0, end: len(data)})
	}

	// Encode data.
	for _, s := range optimised {
		d.encodeDataRaw(data[s.start:s.end], s.dataMode, out)
	}

	return actual, optimised, nil
}

// classifyDataModes classifies the raw data into unoptimised segments.
// e.g. "123ZZ#!#!" =>
// [numeric, 3, "123"] [alphanumeric, 2, "ZZ"] [byte, 4, "#!#!"].
//
// Returns the highest data mode needed to encode the data. e.g. for a mixed
// numeric/alphanumeric input, the highest is alphanumeric.
//
// dataModeNone < dataModeNumeric < dataModeAlphanumeric < dataModeByte
func classifyDataModes(data string, actual []segment) ([]segment, dataMode) {
	var start int
	mode := dataModeNone
	highestRequiredMode := mode

	for i := 0; i < len(data); i++ {
		newMode := charClass[data[i]]

		if newMode != mode {
			if i > 0 {
				actual = append(actual, segment{dataMode: mode, start: start, end: i})

				start = i
			}

			mode = newMode
		}

		if newMode > highestRequiredMode {
			highestRequiredMode = newMode
		}
	}

	actual = append(actual, segment{dataMode: mode, start: start, end: len(data)})

	return actual, highestRequiredMode
}

// optimiseDataModes optimises the list of segments to reduce the overall output
// encoded data length.
//
// The algorithm coalesces adjacent segments. segments are only coalesced when
// the Data Modes are compatible, and when the coalesced segment has a shorter
// encoded length than separate segments.
//
// Multiple segments may be coalesced. For example a string of alternating
// alphanumeric/numeric segments ANANANANA can be optimised to just A.
func (d *dataEncoder) optimiseDataModes(actual, optimised []segment) ([]segment, error) {
	for i := 0; i < len(actual); {
		mode := actual[i].dataMode
		numChars := actual[i].end - actual[i].start

		j := i + 1
		for j < len(actual) {
			nextNumChars := actual[j].end - actual[j].start
			nextMode := actual[j].dataMode

			if nextMode > mode {
				break
			}

			coalescedLength, err := d.encodedLength(mode, numChars+nextNumChars)

			if err != nil {
				return optimised, err
			}

			seperateLength1, err := d.encodedLength(mode, numChars)

			if err != nil {
				return optimised, err
			}

			seperateLength2, err := d.encodedLength(nextMode, nextNumChars)

			if err != nil {
				return optimised, err
			}

			if coalescedLength < seperateLength1+seperateLength2 {
				j++
				numChars += nextNumChars
			} else {
				break
			}
		}

		// The segments i..j-1 are adjacent in the data.
		optimised = append(optimised, segment{dataMode: mode, start: actual[i].start, end: actual[j-1].end})

		i = j
	}

	return optimised, nil
}

// encodeDataRaw encodes data in dataMode. The encoded data is appended to
// encoded.
func (d *dataEncoder) encodeDataRaw(data string, dataMode dataMode, encoded *bitBuffer) {
	// Append mode indicator and character count.
	encoded.appendBits(uint32(modeIndicator(dataMode)), modeIndicatorBits)
	encoded.appendBits(uint32(len(data)), d.charCountBits(dataMode))

	// Append data.
	switch dataMode {
	case dataModeNumeric:
		for i := 0; i < len(data); i += 3 {
			charsRemaining := len(data) - i

			var value uint32
			bitsUsed := 1

			for j := 0; j < charsRemaining && j < 3; j++ {
				value *= 10
				value += uint32(data[i+j] - 0x30)
				bitsUsed += 3
			}
			encoded.appendBits(value, bitsUsed)
		}
	case dataModeAlphanumeric:
		for i := 0; i < len(data); i += 2 {
			charsRemaining := len(data) - i

			var value uint32
			for j := 0; j < charsRemaining && j < 2; j++ {
				value *= 45
				value += uint32(alphanumericValue[data[i+j]])
			}

			bitsUsed := 6
			if charsRemaining > 1 {
				bitsUsed = 11
			}

			encoded.appendBits(value, bitsUsed)
		}
	case dataModeByte:
		for i := 0; i < len(data); i++ {
			encoded.appendByte(data[i])
		}
	}
}

// modeIndicator returns the 4 segment header bits for a segment of type
// dataMode.
func modeIndicator(dataMode dataMode) uint8 {
	switch dataMode {
	case dataModeNumeric:
		return 0b0001
	case dataModeAlphanumeric:
		return 0b0010
	case dataModeByte:
		return 0b0100
	}
	panic("Unknown data mode")
}

// charCountBits returns the number of bits used to encode the length of a data
// segment of type dataMode.
func (d *dataEncoder) charCountBits(dataMode dataMode) int {
	switch dataMode {
	case dataModeNumeric:
		return d.numNumericCharCountBits
	case dataModeAlphanumeric:
		return d.numAlphanumericCharCountBits
	case dataModeByte:
		return d.numByteCharCountBits
	}
	panic("Unknown data mode")
}

// encodedLength returns the number of bits required to encode n symbols in
// dataMode.
//
// The number of bits required is affected by:
//   - QR code type - Mode Indicator length.
//   - Data mode - number of bits used to represent data length.
//   - Data mode - how the data is encoded.
//   - Number of symbols encoded.
//
// An error is returned if the length requested is too long to be
// represented.
func (d *dataEncoder) encodedLength(dataMode dataMode, n int) (int, error) {
	charCountBits := d.charCountBits(dataMode)

	maxLength := (1 << uint8(charCountBits)) - 1

	if n > maxLength {
		return 0, errTooLong
	}

	length := modeIndicatorBits + charCountBits

	switch dataMode {
	case dataModeNumeric:
		length += 10 * (n / 3)

		if n%3 != 0 {
			length += 1 + 3*(n%3)
		}
	case dataModeAlphanumeric:
		length += 11 * (n / 2)
		length += 6 * (n % 2)
	case dataModeByte:
		length += 8 * n
	}

	return length, nil
}
