package main

import (
	"os"

	"github.com/pitchtank/pitchtank/internal/bench"
)

// runBench is `web bench`: the measurement harness (internal/bench). Its
// exit code is the process's: 0 ok, 1 kernel incorrect, 2 usage, 3 could
// not run. The watchdog may end the process if a kernel hangs past
// --max-time.
func runBench(args []string) int {
	return bench.Main(args, os.Stdout, os.Stderr, bench.Options{Exit: os.Exit})
}
