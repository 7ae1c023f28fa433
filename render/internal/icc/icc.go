// Package icc holds the sRGB ICC profile PDF/A documents name as their
// output intent: sRGB.icc from Debian's icc-profiles-free package
// (version 2 profile, 6,922 bytes, made with Little CMS; zlib licence, see
// LICENSE).
package icc

import _ "embed"

// SRGB is the ICC profile of the sRGB colour space.
//
//go:embed sRGB.icc
var SRGB []byte
