package repotest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// The example is found from both places the tests run: a package folder
// (this one, two levels below the root) and the repository root.
func TestFindFromPackageAndRoot(t *testing.T) {
	for _, dir := range []string{".", filepath.Join("..", "..")} {
		t.Run(dir, func(t *testing.T) {
			t.Chdir(dir)
			got, err := Find("clear")
			if err != nil {
				t.Fatal(err)
			}
			if !filepath.IsAbs(got) {
				t.Errorf("Find = %q, want an absolute path", got)
			}
			if _, err := os.Stat(filepath.Join(got, kernels.ManifestFile)); err != nil {
				t.Errorf("Find = %q: %v", got, err)
			}
		})
	}
}

// Outside the repository the error names what was looked for.
func TestFindOutside(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Find("clear")
	if err == nil || !strings.Contains(err.Error(), filepath.Join("examples", "kernels", "clear")) {
		t.Fatalf("Find outside the repository: %v, want an error naming examples/kernels/clear", err)
	}
}
