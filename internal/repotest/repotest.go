// Package repotest finds the repository's example kernels from a test
// binary's working directory. `go test` runs a package's tests in its own
// folder, while the GPU machine, which has no Go, runs the built test
// binaries from the repository root (dev/gpucall): a fixed "../.." made
// every submission test fail there once. One search serves both.
package repotest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// Find is the absolute path of examples/kernels/name, looked for in the
// working directory and up to two folders above it.
func Find(name string) (string, error) {
	rel := filepath.Join("examples", "kernels", name)
	for _, up := range []string{".", "..", filepath.Join("..", "..")} {
		dir := filepath.Join(up, rel)
		if _, err := os.Stat(filepath.Join(dir, kernels.ManifestFile)); err != nil {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("finding %s: %w", rel, err)
		}
		return abs, nil
	}
	return "", fmt.Errorf("no %s with a %s here or up to two folders above: run from the repository root or a package folder", rel, kernels.ManifestFile)
}

// ExampleDir is Find for a test: it fails t when the example is not there.
func ExampleDir(t testing.TB, name string) string {
	t.Helper()
	dir, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
