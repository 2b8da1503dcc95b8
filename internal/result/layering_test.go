package result

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// pureGo are the packages that read results without measuring them:
// storage, the runner, the demo and the web layer. They must build without
// cgo, so a machine with no CUDA toolkit (and no C compiler) can build and
// test them, and a crash in the GPU code cannot reach them.
var pureGo = []string{
	"github.com/pitchtank/pitchtank/internal/sqlite",
	"github.com/pitchtank/pitchtank/internal/httpserver",
	"github.com/pitchtank/pitchtank/internal/runner",
	"github.com/pitchtank/pitchtank/internal/demo",
}

// gpuSide are the packages that reach the GPU, through cgo or go-nvml.
var gpuSide = []string{
	"github.com/pitchtank/pitchtank/internal/gpu",
	"github.com/pitchtank/pitchtank/internal/engine",
	"github.com/pitchtank/pitchtank/internal/bench",
	"github.com/pitchtank/pitchtank/internal/kernelcheck",
	"github.com/NVIDIA/go-nvml",
}

// TestReadersStayPureGo keeps the rule of docs/architecture.md that only
// bench and below link the GPU: it fails when one of pureGo imports, at
// any depth, a package of gpuSide or any package outside the standard
// library with cgo files, so `CGO_ENABLED=0 go build` of them keeps working.
// It lists the packages rather than building them: a second build of the
// whole tree without cgo would cost CI a minute.
func TestReadersStayPureGo(t *testing.T) {
	list := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}"}, pureGo...)...)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pureGo, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var dep, std, cgo string
		if _, err := fmt.Sscan(line, &dep, &std, &cgo); err != nil {
			t.Fatalf("go list line %q: %v", line, err)
		}
		for _, bad := range gpuSide {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("%s is a dependency of %v: the readers of results must not link the GPU (docs/architecture.md)", dep, pureGo)
			}
		}
		if std == "false" && cgo != "0" {
			t.Errorf("%s, a dependency of %v, has cgo files: CGO_ENABLED=0 go build of them would fail", dep, pureGo)
		}
	}
}
