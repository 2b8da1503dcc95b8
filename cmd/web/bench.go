package main

import (
	"fmt"
	"os"
)

// runBench is replaced by the bench harness (issue 3); until then it refuses.
func runBench(args []string) int {
	fmt.Fprintln(os.Stderr, "web bench: not built yet")
	return 2
}
