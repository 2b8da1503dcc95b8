package kernels

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// The group best with the split (docs/BENCHMARKS.md section 29's).
const splitSpec = "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3&token_split=192"

// token_split=192 on group bench1: two parts on their own streams, each
// launch from a module the variant compiles, the SMs divided, the wide
// part's table describing its groups (and only those), every table and
// workspace offset inside the merged sizes.
func TestTokenSplitPlan(t *testing.T) {
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant(splitSpec)
	if err != nil {
		t.Fatal(err)
	}
	s := Shape{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	pl, err := v.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Mode != "graph" || pl.Streams != 1 || len(pl.Launches) != 4 {
		t.Fatalf("plan: mode %s, %d side streams, %d launches; want graph, 1, 4", pl.Mode, pl.Streams, len(pl.Launches))
	}
	var mods []string
	for _, c := range v.Candidates() {
		mods = append(mods, c.Name)
	}
	kernels := []string{"wg_tokens", "wg_tokens", "wg_group_gemm", "wg_group_gemm"}
	sms := 0
	for n, l := range pl.Launches {
		if l.Kernel != kernels[n] || l.Stream != n%2 || !slices.Contains(mods, l.Module) {
			t.Errorf("launch %d: %s on stream %d from %q; want %s on stream %d from a candidate", n, l.Kernel, l.Stream, l.Module, kernels[n], n%2)
		}
		if (n >= 2) != l.Overlap {
			t.Errorf("launch %d (%s): overlap %v", n, l.Kernel, l.Overlap)
		}
		if wide := strings.Contains(l.Module, "tile_m=192"); wide != (l.Stream == 1) {
			t.Errorf("launch %d on stream %d runs module %s", n, l.Stream, l.Module)
		}
		if l.PersistentPerSM > 0 {
			sms += l.SMs
			if int(l.Grid[0]) > l.SMs {
				t.Errorf("launch %d: grid %d over its %d SMs", n, l.Grid[0], l.SMs)
			}
		}
	}
	if w := wgmmaSplitSMs(s, 132); sms != 132 || pl.Launches[3].SMs != w || w < 30 || w > 60 {
		t.Errorf("the GEMMs hold %d SMs, the wide one %d (wgmmaSplitSMs %d); want 132, between 20 and 60", sms, pl.Launches[3].SMs, w)
	}
	if !strings.Contains(pl.Resolved, " + ") {
		t.Errorf("Resolved %q names one module", pl.Resolved)
	}
	// Addresses that say which buffer and group they are.
	addr := func(b Buffer, g int) uint64 { return uint64(b+1)<<40 | uint64(g+1)<<32 | 0x1000 }
	tb := pl.TableBytes(addr)
	for n, l := range pl.Launches {
		for _, a := range l.Args {
			if a.Kind == ArgPtr && a.Buf == BufTable && a.Value >= int64(len(tb)) {
				t.Errorf("launch %d: table offset %d of %d bytes", n, a.Value, len(tb))
			}
			if a.Kind == ArgPtr && a.Buf == BufWork && a.Value >= pl.WorkspaceBytes {
				t.Errorf("launch %d: workspace offset %d of %d bytes", n, a.Value, pl.WorkspaceBytes)
			}
		}
	}
	// Each GEMM's first argument is its groups' descriptors: A's address
	// names the group, then M.
	for n, want := range map[int][]int{2: {0, 2, 3, 4, 5, 6}, 3: {1, 7}} {
		off := pl.Launches[n].Args[0].Value
		for i, g := range want {
			d := tb[off+int64(i)*fgGroupBytes:]
			a, m := binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint32(d[40:])
			if a != addr(BufA, g) || int(m) != s.M[g] {
				t.Errorf("launch %d descriptor %d: A %#x, M %d; want group %d's %#x, %d", n, i, a, m, g, addr(BufA, g), s.M[g])
			}
		}
	}
	// Token passes and GEMMs of one part share their workspace region.
	for _, pair := range [][2]int{{0, 2}, {1, 3}} {
		tok, gemm := pl.Launches[pair[0]], pl.Launches[pair[1]]
		if tok.Args[2] != gemm.Args[len(gemm.Args)-1] {
			t.Errorf("stream %d: token pass writes %+v, the GEMM reads %+v", tok.Stream, tok.Args[2], gemm.Args[len(gemm.Args)-1])
		}
	}
}

// Without a group of 129-192 tokens, or where the plain plan's tiles fit in
// one wave (bench3), the split is the plain variant's plan; with only such
// groups, the 192-token module's.
func TestTokenSplitOnePart(t *testing.T) {
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant(splitSpec)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := p.ResolveVariant(strings.TrimSuffix(splitSpec, "&token_split=192"))
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	s := Shape{M: []int{128, 384}, N: 4096, K: 1536}
	a, err := v.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	b, err := plain.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode != b.Mode || a.Resolved != b.Resolved || len(a.Launches) != len(b.Launches) || a.Launches[0].Module != "" {
		t.Errorf("bench4 split %s %q %d launches, plain %s %q %d", a.Mode, a.Resolved, len(a.Launches), b.Mode, b.Resolved, len(b.Launches))
	}
	s3 := Shape{M: []int{192, 320}, N: 3072, K: 4096}
	if a, err = v.Plan(s3, lim); err != nil {
		t.Fatal(err)
	}
	if a.Mode != "grouped" || a.Launches[0].Module != "" {
		t.Errorf("bench3 (120 tiles for 132 SMs): split %s plan from %q", a.Mode, a.Launches[0].Module)
	}
	if a, err = v.Plan(s3, Limits{MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}); err != nil || a.Mode != "graph" {
		t.Errorf("bench3 without the SM count: %v, want the split", err)
	}
	w, err := v.Plan(Shape{M: []int{150, 192}, N: 4096, K: 1536}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.Resolved, "tile_m=192") || w.Mode != "grouped" {
		t.Errorf("only wide groups: %s plan of %q", w.Mode, w.Resolved)
	}
}

// The split's rule names its knob; a variant it allows compiles both modules.
func TestTokenSplitCheck(t *testing.T) {
	p := wgmmaProblem(t)
	if _, err := p.ResolveVariant("wgmma?tile_n=auto&tail_width=full&tokens=once&consumers=3&token_split=192"); err == nil || !strings.Contains(err.Error(), "token_split") {
		t.Errorf("token_split without fit64: %v", err)
	}
	v, err := p.ResolveVariant(splitSpec)
	if err != nil {
		t.Fatal(err)
	}
	var wide, narrow int
	for _, c := range v.Candidates() {
		if c.Knobs.TileM == 192 {
			wide++
		} else {
			narrow++
		}
	}
	if wide == 0 || narrow == 0 {
		t.Errorf("candidates: %d wide, %d narrow", wide, narrow)
	}
}
