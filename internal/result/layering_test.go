package result

import (
	"os"
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
// any depth, a package of gpuSide, or stops building with CGO_ENABLED=0.
func TestReadersStayPureGo(t *testing.T) {
	env := append(os.Environ(), "CGO_ENABLED=0")
	list := exec.Command("go", append([]string{"list", "-deps"}, pureGo...)...)
	list.Env = env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pureGo, err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range gpuSide {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("%s is a dependency of %v: the readers of results must not link the GPU (docs/architecture.md)", dep, pureGo)
			}
		}
	}
	build := exec.Command("go", append([]string{"build"}, pureGo...)...)
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build %v: %v\n%s", pureGo, err, out)
	}
}
