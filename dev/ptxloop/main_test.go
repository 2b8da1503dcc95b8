package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
)

// A listing with an outer loop around an inner one that issues the wgmma,
// and a third loop without any: only the inner loop counts.
const ptxListing = `
.visible .entry k()
{
	.reg .b32 %r<9>;
	mov.u32 %r1, 0;
$L__BB0_1:
	.loc 1 10 3
	add.s32 %r1, %r1, 1;
$L__BB0_2:
	.loc 1 20 5
	shl.b32 %r2, %r1, 3;
	and.b32 %r3, %r2, 8;
	// begin inline asm
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, {%r4}, %rd1, p, 1, 1, 1;
	// end inline asm
	.loc 1 21 5
	setp.lt.s32 %p1, %r2, 64;
	@%p1 bra $L__BB0_2;
	.loc 1 30 3
	setp.lt.s32 %p2, %r1, 4;
	@%p2 bra $L__BB0_1;
$L__BB0_3:
	add.s32 %r5, %r5, 1;
	bra.uni $L__BB0_3;
}
`

func TestWgmmaLoopsInnermostOnly(t *testing.T) {
	loops := wgmmaLoops(ptxListing)
	if len(loops) != 1 {
		t.Fatalf("got %d loops, want the inner one only: %+v", len(loops), loops)
	}
	l := loops[0]
	if l.total() != 5 || l.marked != 1 {
		t.Errorf("inner loop: %d instructions, %d wgmmas; want 5 and 1", l.total(), l.marked)
	}
	if l.counts[20] != 3 || l.counts[21] != 2 {
		t.Errorf("per line %v, want line 20: 3, line 21: 2", l.counts)
	}
	b := busiest(l.counts, 1)
	if len(b) != 1 || b[0].key != 20 {
		t.Errorf("busiest(1) = %v, want line 20", b)
	}
}

func TestRunRejectsHalfASpec(t *testing.T) {
	err := run([]string{"-problem", "nvfp4_dual_gemm"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-problem and -variant") {
		t.Fatalf("err = %v, want the pairing of -problem and -variant named", err)
	}
}

// TestDualLoops compiles the dual best's four benchmark modules and checks
// that each has one chunk loop of eight wgmmas, and that the loops no
// longer rebuild what steps 74-76 took out (the weight copies' sources).
func TestDualLoops(t *testing.T) {
	if _, err := gpu.NVRTCVersion(); err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required (PITCHTANK_REQUIRE_NVRTC=1): %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v): the modules cannot be compiled", err)
	}
	var out bytes.Buffer
	dir := t.TempDir()
	if err := run([]string{"-problem", bests[0][0], "-variant", bests[0][1], "-lines", "100", "-out", dir}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "instructions, 8 wgmmas"); n != 4 {
		t.Errorf("%d loops of 8 wgmmas, want one per benchmark shape (4):\n%s", n, text)
	}
	// Before step 75 the tall loop spent 13 instructions on this line
	// alone; one or two (an address add NVVM files under it) are fine.
	for i := 1; i <= 4; i++ {
		base := fmt.Sprintf("%s/nvfp4_dual_gemm_bench%d", dir, i)
		ptx, err1 := os.ReadFile(base + ".ptx")
		src, err2 := os.ReadFile(base + ".cu")
		if err1 != nil || err2 != nil {
			t.Fatalf("-out kept no PTX or source for bench%d: %v %v", i, err1, err2)
		}
		line := 1 + slices.IndexFunc(strings.Split(string(src), "\n"), func(l string) bool {
			return strings.Contains(l, "cp16[b][h] = gp.b + nn * rowb")
		})
		if line == 0 {
			t.Fatal("the weight copies' source line is gone from the kernel: update this test")
		}
		for _, l := range wgmmaLoops(string(ptx)) {
			if n := l.counts[line]; n > 2 {
				t.Errorf("bench%d: the chunk loop spends %d instructions rebuilding the copies' sources (line %d; kernel-notes step 75)", i, n, line)
			}
		}
	}
}

// -keys lists one key per benchmark shape, and two shapes that resolve to
// one module share its key; nothing is compiled, so no NVRTC is needed.
func TestKeysNameEachShapesModule(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-problem", bests[1][0], "-variant", bests[1][1], "-keys", "13.0"}, &out); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want one per benchmark shape:\n%s", len(rows), out.String())
	}
	key := map[string]string{}
	for _, r := range rows {
		f := strings.Fields(r)
		if len(f) != 4 || len(f[2]) != 64 {
			t.Fatalf("row %q: want problem, shape, a 64-hex key and the module", r)
		}
		if k, ok := key[f[3]]; ok && k != f[2] {
			t.Errorf("module %s has two keys", f[3])
		}
		key[f[3]] = f[2]
	}
	if len(key) != 2 {
		t.Errorf("%d modules, want 2 (the group's hybrid module on bench1-2, its whole-tile one on bench3-4):\n%s", len(key), out.String())
	}
}

// A cuobjdump -sass listing: a loop without HGMMA, then one with, inside a
// function whose other code runs once.
const sassListing = `
	code for sm_90a
		Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   IADD3 R2, R2, 0x1, RZ ;
        /*0020*/               @P0 BRA 0x10 ;
        /*0030*/                   PRMT R4, R5, 0x3210, RZ ;
        /*0040*/                   LOP3.LUT R6, R4, 0x80808080, RZ, 0xc0, !PT ;
        /*0050*/                   HGMMA.64x128x16.F32 R24, R4, gdesc[UR4], R24 ;
        /*0060*/                   LOP3.LUT R7, R6, 0x0e0e0e0e, RZ, 0xc0, !PT ;
        /*0070*/              @!P1 BRA 0x30 ;
        /*0080*/                   EXIT ;
`

func TestSassLoopsCountTheHGMMALoop(t *testing.T) {
	fns := sassFuncs(sassListing)
	if len(fns) != 1 || fns[0].name != "k" || len(fns[0].loops()) != 1 {
		t.Fatalf("got %+v, want function k with one HGMMA loop", fns)
	}
	l := fns[0].loops()[0]
	if l.start != 0x30 || l.end != 0x70 || l.total() != 5 || l.marked != 1 || l.counts["LOP3"] != 2 || l.counts["BRA"] != 1 {
		t.Errorf("loop %+v: want 0x30-0x70, 5 instructions, 1 HGMMA, 2 LOP3, 1 BRA", l)
	}
	var out bytes.Buffer
	if err := run([]string{"-sass"}, &out); err == nil {
		t.Error("-sass without files: want an error")
	}
}
