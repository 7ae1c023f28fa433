//go:build !linux

package app

// DropFilePages does nothing outside Linux (see filepages_linux.go).
func DropFilePages() int64 { return 0 }
