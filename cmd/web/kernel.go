package main

import (
	"io"

	"github.com/pitchtank/pitchtank/internal/kernelcheck"
)

// kernelCmd is `web kernel check`: compile a submitted kernel for every
// architecture the local NVRTC supports (internal/kernelcheck).
func kernelCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] != "check" {
		return usageError(stderr, "web kernel: the only subcommand is \"check\" (web kernel check [--problem NAME] [--json] PATH)")
	}
	return kernelcheck.Main(args[1:], stdout, stderr)
}
