package gpu

import (
	"errors"
	"strings"
	"testing"
)

// Headers reach NVRTC by name, a broken one is reported at its own
// file:line, and the cache key moves with a header's bytes.
func TestCompileHeaders(t *testing.T) {
	requireNVRTC(t)
	src := "#include \"tile.cuh\"\nextern \"C\" __global__ void k(int* p) { p[0] = TILE; }\n"
	dir := t.TempDir()
	a, err := Compile("k.cu", src, CompileOptions{Arch: "sm_80", Headers: map[string]string{"tile.cuh": "#define TILE 64\n"}, CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile("k.cu", src, CompileOptions{Arch: "sm_80", Headers: map[string]string{"tile.cuh": "#define TILE 128\n"}, CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if a.Key == b.Key || b.CacheHit {
		t.Errorf("a changed header kept the cache key %s (hit %v)", a.Key, b.CacheHit)
	}
	c, err := Compile("k.cu", src, CompileOptions{Arch: "sm_80", Headers: map[string]string{"tile.cuh": "#define TILE 64\n"}, CacheDir: dir})
	if err != nil || !c.CacheHit || c.Key != a.Key {
		t.Errorf("the same header missed the cache: %v %v", c, err)
	}
	if _, err := Compile("k.cu", src, CompileOptions{Arch: "sm_80"}); err == nil {
		t.Error("compiled without the header it includes")
	}
	_, err = Compile("k.cu", src, CompileOptions{Arch: "sm_80", Headers: map[string]string{"tile.cuh": "#define TILE 64\nint x = ;\n"}})
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Log, "tile.cuh(2)") {
		t.Errorf("error in a header: %v", err)
	}
	for _, bad := range []map[string]string{{"": "x"}, {"a\nb": "x"}, {"h.cuh": "x\x00"}} {
		if _, err := Compile("k.cu", src, CompileOptions{Arch: "sm_80", Headers: bad}); err == nil || !strings.Contains(err.Error(), "header") {
			t.Errorf("headers %q: %v", bad, err)
		}
	}
	if cacheKey("s", nil, "sm_80", "11.8") != cacheKeyHeaders("s", nil, "sm_80", "11.8", nil, nil) {
		t.Error("a compile without headers changed its cache key")
	}
}
