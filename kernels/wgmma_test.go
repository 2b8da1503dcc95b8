package kernels

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func wgmmaProblem(t *testing.T) *Problem {
	t.Helper()
	p, err := LookupProblem("nvfp4_group_gemm")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The group GEMM's defaults are the measured fastest (128x128, 3 stages,
// full-width tiles, whole-tile schedule, shift decode, tokens per block).
// Its space, per decode and schedule: with tokens=block, 15 tile, stage,
// register and pipeline combinations at full width and 23 with
// tail_width=fit (fit takes the register split too: its four wgmma widths'
// code overflowed the even budget, C7512), tile_n=auto included; with
// tokens=once 18 and 27 (without the raw token ring 128x128 fits 4 stages
// and the 256-row tile 3), twice with overlap=none and pdl: 36 and 54, and
// with consumers=3 (tokens=once, 192 rows) 64x192 at 2, 3 or 4 stages and
// 128x192 (split) at 2 or 3, and tile_n=auto, each at both overlaps: 12;
// with tail_width=fit as well (one 64-row block per consumer) 18, as 64x192
// then also takes the split; and tail_width=fit64 (two widths) wherever
// fit is allowed: 95 more. Five schedules (tiles, streamk, hybrid, auto,
// autohybrid), two decodes: 2530; two prefetches: 5060; overlap=ready
// (a third overlap beside none and pdl, wherever pdl is allowed): 6980;
// prefetch=producer (the producer warpgroup copies the weights: tokens=once
// only), 288 per decode and schedule: 9860.
// The device test
// checks every combination at the default decode, tokens, tail width and
// prefetch, and a pairwise cover of the rest.
func TestWgmmaFamilyDeclared(t *testing.T) {
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant("wgmma")
	if err != nil {
		t.Fatal(err)
	}
	k := v.Knobs
	if k.TileM != 128 || k.TileN != 128 || k.Stages != 3 || k.TailWidth != "full" || k.WarpRoles != "producer_consumer" || v.MinArch != 90 {
		t.Errorf("wgmma defaults %+v, MinArch %d", k, v.MinArch)
	}
	if n := len(p.VariantCombinations("wgmma")); n != 221400 {
		t.Errorf("wgmma combinations: %d, want 221400 (both stagings x (per decode, schedule and prefetch none or next 38 with tokens=block, 135 with once at three overlaps, 45 with three consumers, 131 at fit64; the 288 with tokens=once again at prefetch=producer; 4 each with weights=shared and staged): 19736, and 8384 with ranges=cost, at fit or fit64 under the four schedules with stream-K: 28120; and again with token_rows=live, 24208 of them with tokens=once: 52328; and 16128 with overlap=prologue: 68456; and 52992 more with token_copy=width alone (tokens=once at fit or fit64), 55792 with token_wait=early alone (the halves pipeline, not folded, the weights in registers), 44160 with both)", n)
	}
	// weights=shared on the group's narrow tile: its 128 weight rows from
	// one B, the same shared memory as the dual narrow tile's.
	sharedWeights(t, p, map[string]string{"WG_CONS": "2", "WG_MB": "1", "WG_FIT": "0"},
		"wgmma?tail_width=fit64&registers=split", "wgmma?tile_n=256&registers=split", "wgmma?tile_n=auto")
	if got := v.KernelNames(); len(got) != 1 || got[0] != "wg_group_gemm" {
		t.Errorf("kernel names %v", got)
	}
	def := v.Defines()
	for key, want := range map[string]string{"WG_TM": "128", "WG_CONS": "2", "WG_MB": "1", "STAGES": "3", "WG_RS": "4", "WG_FIT": "0", "WG_SK": "0", "WG_CREGS": "0", "WG_DB": "0", "WG_DEC": "0", "WG_TOK": "0", "WG_PDL": "0", "WG_PF": "0", "WG_RDY": "0"} {
		if def[key] != want {
			t.Errorf("define %s = %q, want %q", key, def[key], want)
		}
	}
	split, err := p.ResolveVariant("wgmma?tile_n=256&stages=2&registers=split")
	if err != nil {
		t.Fatal(err)
	}
	if d := split.Defines(); d["WG_CREGS"] != "224" || d["WG_MB"] != "2" || d["WG_TM"] != "128" || d["STAGES"] != "2" || d["WG_DB"] != "0" {
		t.Errorf("split defines %v", d)
	}
	chunks, err := p.ResolveVariant("wgmma?registers=split&pipeline=chunks")
	if err != nil {
		t.Fatal(err)
	}
	if d := chunks.Defines(); d["WG_CREGS"] != "216" || d["WG_DB"] != "1" || d["WG_MB"] != "1" {
		t.Errorf("chunks defines %v", d)
	}
	prmt, err := p.ResolveVariant("wgmma?decode=prmt")
	if err != nil {
		t.Fatal(err)
	}
	if d := prmt.Defines(); d["WG_DEC"] != "1" || d["WG_CREGS"] != "0" || d["WG_DB"] != "0" {
		t.Errorf("decode=prmt defines %v", d)
	}
	fit, err := p.ResolveVariant("wgmma?tail_width=fit&tile_n=256&tile_m=64")
	if err != nil {
		t.Fatal(err)
	}
	if d := fit.Defines(); d["WG_FIT"] != "1" || d["WG_MB"] != "2" || d["WG_TM"] != "64" {
		t.Errorf("fit defines %v", d)
	}
}

// Combinations that would not fit are refused with the knob and the reason:
// 4 stages of 128-token tiles exceed the shared memory, and 256 weight rows
// at 128 tokens exceed the consumers' registers.
func TestWgmmaRefusals(t *testing.T) {
	p := wgmmaProblem(t)
	wantKnobErrors(t, p, map[string]string{
		"wgmma?stages=4":              "shared memory",
		"wgmma?tile_n=256":            "registers",
		"wgmma?tile_m=32":             "not allowed",
		"wgmma?warp_roles=uniform":    "not allowed",
		"wgmma?split_k=2":             "unknown knob",
		"wgmma?tile_m=64&tail_width=": "no value given",
		"wgmma?token_rows=live":       "tokens=once",
		// The producer thread copies a fit width only from the decode-ahead
		// stages, and the early test is in the halves pipeline only.
		"wgmma?token_copy=width":             "tokens=once, tail_width fit or fit64",
		"wgmma?tokens=once&token_copy=width": "tokens=once, tail_width fit or fit64",
		"wgmma?tile_m=64&stages=2&registers=split&pipeline=chunks&token_wait=early": "halves pipeline",
	})
	for _, k := range p.VariantCombinations("wgmma") {
		if sb := WgmmaSharedBytes(p.Name, k); sb > hopperSharedOptin {
			t.Errorf("%+v: %d bytes of shared memory enumerated", k, sb)
		}
	}
	// The Go mirror of FG_SMEM_BYTES for the default (the harness printed
	// 222256 on the H100, docs/kernel-notes.md step 4).
	v, _ := p.ResolveVariant("wgmma")
	if sb := WgmmaSharedBytes(p.Name, v.Knobs); sb != 222256 {
		t.Errorf("default shared bytes %d, want 222256", sb)
	}
}

// The plan is one persistent launch, one block per SM, over an FgGroup
// table followed by one FgTile per 128x128 tile; any device but Hopper is
// refused with a message naming the alternatives.
func TestWgmmaPlan(t *testing.T) {
	p := wgmmaProblem(t)
	v, _ := p.ResolveVariant("wgmma")
	s := Shape{M: []int{80, 176, 1}, N: 4096, K: 7168}
	pl, err := v.Plan(s, Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	tiles := (1 + 2 + 1) * (4096 / 128)
	if len(pl.Launches) != 1 {
		t.Fatalf("launches %d", len(pl.Launches))
	}
	l := pl.Launches[0]
	if l.Kernel != "wg_group_gemm" || l.Grid[0] != 128 || l.Block[0] != 384 || l.Tiles != tiles || l.SharedBytes != 222256 || l.PersistentPerSM != 1 {
		t.Errorf("launch %+v, want grid %d (tiles) x 384 threads", l, tiles)
	}
	addr := func(b Buffer, g int) uint64 { return uint64(b)<<32 | uint64(g)<<16 }
	tb := pl.TableBytes(addr)
	tilesOff := ceilDiv(3*fgGroupBytes, 16) * 16
	if len(tb) != tilesOff+16*tiles {
		t.Fatalf("table %d bytes, want %d", len(tb), tilesOff+16*tiles)
	}
	le := binary.LittleEndian
	if got := le.Uint64(tb[fgGroupBytes+16:]); got != addr(BufB, 1) {
		t.Errorf("group 1's B pointer %x", got)
	}
	if m := le.Uint32(tb[fgGroupBytes+40:]); m != 176 {
		t.Errorf("group 1's M %d", m)
	}
	// The largest group's full tiles come first (FusedTiles order).
	if g := le.Uint32(tb[tilesOff:]); g != 1 {
		t.Errorf("first tile's group %d, want 1 (M 176)", g)
	}
	for _, arch := range []string{"sm_100a", "sm_80"} {
		_, err := v.Plan(s, Limits{SMs: 148, MaxSharedOptin: hopperSharedOptin, Arch: arch})
		if err == nil || !strings.Contains(err.Error(), "Hopper") || !strings.Contains(err.Error(), "fused") {
			t.Errorf("%s: %v, want a refusal naming Hopper and the alternatives", arch, err)
		}
	}
}

// The dual GEMM's wgmma variant: 128 tokens by 64 output columns (B1 rows in
// consumer 0, the same B2 rows in consumer 1), the DUAL entry, and the
// group kernel's shared-memory layout for 128 weight rows per block.
func TestWgmmaDualDeclared(t *testing.T) {
	d, err := LookupProblem("nvfp4_dual_gemm")
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.ResolveVariant("wgmma")
	if err != nil {
		t.Fatal(err)
	}
	if k := v.Knobs; k.TileM != 128 || k.TileN != 64 || k.Stages != 3 || k.Launch != "sequential" || v.MinArch != 90 {
		t.Errorf("dual wgmma defaults %+v, MinArch %d", k, v.MinArch)
	}
	if got := v.KernelNames(); len(got) != 1 || got[0] != "wg_dual_gemm" {
		t.Errorf("kernel names %v", got)
	}
	def := v.Defines()
	for key, want := range map[string]string{"DUAL": "1", "WG_TM": "128", "WG_MB": "1", "STAGES": "3", "WG_RS": "4", "WG_FIT": "0", "WG_SK": "0", "WG_DEC": "0"} {
		if def[key] != want {
			t.Errorf("define %s = %q, want %q", key, def[key], want)
		}
	}
	if sb := WgmmaSharedBytes(d.Name, v.Knobs); sb != 222256 {
		t.Errorf("dual default shared bytes %d, want the group default's 222256", sb)
	}
	// 12 tiles x stages less 128x128 at 2, 3 and 4 stages (two 64-row
	// blocks of 64 accumulators each per consumer: registers) and 4 stages
	// of 128-token tiles (shared memory), times three schedules; and
	// 128x128 at 2 stages with the register split, three schedules; and
	// the whole-chunk pipeline (split) on 64-column tiles: 5 tiles x stages
	// that fit, three schedules: 42; and tile_n=auto, three schedules: 45,
	// times the two decodes. With tokens=once 9 more per decode fit (no raw
	// token ring: 64-column tiles at 4 stages, the 128-column tile at 3),
	// and the 256-token tile (64 columns, 2 stages, split), three schedules;
	// those 57 at both overlaps. With the fourth and fifth schedules
	// (hybrid, autohybrid) every count above five thirds: 530; both
	// prefetches: 1060; with overlap=ready beside pdl: 1440. The folded
	// producer (tokens=once, whole tiles, even registers, overlap none or
	// pdl), per decode, overlap and prefetch: two consumers at 64x64,
	// 128x64 and 64x128 on 2-4 stages, 128x128 on 2-3, 256x64 on 2 (12);
	// four consumers at 128 columns, 128 tokens on 2 stages and 64 on 2-4
	// (4): 128 more, 1568. The weights decoded into shared memory (shared
	// or staged): the narrow tile at 2 stages, whole tiles, per decode and
	// overlap: 4 more each. prefetch=producer (tokens=once, a producer
	// warpgroup): 3 x 95 per decode, 2146. Both epilogues on every one
	// (the split needs nothing of the others): 4292; both stagings: 8584.
	// tile_m=auto (with tile_n=auto and tokens=once: five schedules, three
	// overlaps, three prefetches per decode, 45) on every epilogue and
	// staging: 360 more, 8944.
	if n := len(d.VariantCombinations("wgmma")); n != 18864 {
		t.Errorf("dual wgmma combinations: %d, want 18864 (2 stagings x 2 epilogues x (75 per decode and prefetch none or next with tokens=block, 3 x 95 with once at all three prefetches, 16 folded, 4 each with shared and staged weights, 45 with tile_m=auto)); 8944, and 2400 with overlap=prologue: 11344; and 7520 of them again with token_wait=early, those with the halves pipeline, not folded, the weights in registers", n)
	}
	if g, _ := LookupProblem("nvfp4_group_gemm"); g != nil {
		if _, err := g.ResolveVariant("wgmma?epilogue=split"); err == nil {
			t.Error("the group GEMM accepted epilogue=split, a knob of the dual GEMM's gate")
		}
	}
	// weights=shared on the narrow tile; the wide tile and stream-K refused.
	sharedWeights(t, d, map[string]string{"WG_MB": "1", "WG_RS": "4"},
		"wgmma?tile_n=128&registers=split", "wgmma?schedule=streamk")
	for _, spec := range []string{"wgmma?weights=shared&stages=2", "wgmma?weights=shared&tokens=once", "wgmma?weights=staged&stages=2", "wgmma?weights=staged&tokens=once"} {
		var ke *KnobError // tokens=block; 3 stages
		if _, err := d.ResolveVariant(spec); !errors.As(err, &ke) || ke.Knob != "weights" {
			t.Errorf("%s: %v, want a KnobError on weights", spec, err)
		}
	}
	if def := v.Defines(); def["WG_SSA"] != "0" || def["WG_CSA"] != "0" {
		t.Errorf("default WG_SSA = %q, WG_CSA = %q", def["WG_SSA"], def["WG_CSA"])
	}
	big, err := d.ResolveVariant("wgmma?tile_m=256&stages=2&registers=split&tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	if def := big.Defines(); def["WG_TM"] != "256" || def["WG_RS"] != "2" || def["WG_MB"] != "1" || def["WG_CREGS"] != "224" || def["WG_TOK"] != "1" {
		t.Errorf("256-token defines %v", def)
	}
	if sb := WgmmaSharedBytes(d.Name, big.Knobs); sb > hopperSharedOptin {
		t.Errorf("256-token tile: %d bytes of shared memory", sb)
	}
	wantKnobErrors(t, d, map[string]string{
		"wgmma?tile_n=128":                          "registers",
		"wgmma?tile_n=128&registers=split":          "shared memory",
		"wgmma?registers=split":                     "even budget",
		"wgmma?tile_n=256":                          "not allowed",
		"wgmma?tail_width=fit":                      "unknown knob",
		"wgmma?stages=5":                            "not allowed",
		"wgmma?tile_m=64&tile_n=32":                 "not allowed",
		"wgmma?tile_m=256&stages=2&registers=split": "tokens=once",
		"wgmma?tile_m=256&tile_n=128&stages=2&registers=split&tokens=once": "64 output columns",
		"wgmma?tile_m=256&stages=2&tokens=once":                            "registers",
		"wgmma?tile_m=256&registers=split&tokens=once":                     "shared memory",
	})
	two, err := d.ResolveVariant("wgmma?tile_m=64&tile_n=128")
	if err != nil {
		t.Fatal(err)
	}
	if def := two.Defines(); def["WG_MB"] != "2" || def["WG_TM"] != "64" {
		t.Errorf("64x128 defines %v", def)
	}
}

// The dual plan: one persistent launch of wg_dual_gemm with the problem's
// pointers and sizes, ceil(M/128) x ceil(N/64) tiles, at most one block per SM.
func TestWgmmaDualPlan(t *testing.T) {
	d, _ := LookupProblem("nvfp4_dual_gemm")
	v, _ := d.ResolveVariant("wgmma")
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	for _, c := range []struct {
		s           Shape
		tiles, grid int
	}{
		{Shape{M: []int{256}, N: 4096, K: 7168}, 2 * 64, 128},
		{Shape{M: []int{512}, N: 3072, K: 7168}, 4 * 48, 132},
		{Shape{M: []int{129}, N: 256, K: 640}, 2 * 4, 8},
	} {
		pl, err := v.Plan(c.s, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Launches) != 1 || pl.TableBytes != nil {
			t.Fatalf("%v: %d launches, table %v", c.s, len(pl.Launches), pl.TableBytes != nil)
		}
		l := pl.Launches[0]
		if l.Kernel != "wg_dual_gemm" || l.Tiles != c.tiles || l.Grid[0] != uint32(c.grid) || l.Block[0] != 384 || l.SharedBytes != 222256 {
			t.Errorf("%v: launch %+v, want %d tiles on %d blocks", c.s, l, c.tiles, c.grid)
		}
		if len(l.Args) != 13 || l.Args[4].Buf != BufB2 || l.Args[7].Value != int64(c.s.M[0]) || l.Args[9].Value != int64(c.s.K) ||
			l.Args[10] != (Arg{Kind: ArgI64}) || l.Args[11] != (Arg{Kind: ArgI64}) || l.Args[12] != (Arg{Kind: ArgI64}) || pl.WorkspaceBytes != 0 {
			t.Errorf("%v: args %+v", c.s, l.Args)
		}
	}
	if _, err := v.Plan(Shape{M: []int{256}, N: 4096, K: 7168}, Limits{SMs: 148, Arch: "sm_100a"}); err == nil || !strings.Contains(err.Error(), "Hopper") {
		t.Errorf("sm_100a: %v, want a refusal naming Hopper", err)
	}
}

// Stream-K: one block per SM whatever the tile count (up to one per K chunk),
// a workspace slot of partial sums per block and consumer, and the flags as
// zeros in the launch table (after the group kernel's tile entries).
func TestWgmmaStreamKPlan(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	d, _ := LookupProblem("nvfp4_dual_gemm")
	dv, err := d.ResolveVariant("wgmma?schedule=streamk")
	if err != nil {
		t.Fatal(err)
	}
	if dv.Defines()["WG_SK"] != "1" {
		t.Errorf("defines %v", dv.Defines())
	}
	for _, c := range []struct {
		s    Shape
		grid int
	}{
		{Shape{M: []int{512}, N: 3072, K: 7168}, 132}, // 192 tiles
		{Shape{M: []int{256}, N: 4096, K: 7168}, 132}, // 128 tiles, 56 chunks each
		{Shape{M: []int{1}, N: 64, K: 256}, 2},        // 1 tile of 2 chunks
	} {
		pl, err := dv.Plan(c.s, lim)
		if err != nil {
			t.Fatal(err)
		}
		l := pl.Launches[0]
		if int(l.Grid[0]) != c.grid || pl.WorkspaceBytes != int64(c.grid)*2*128*64*4 {
			t.Errorf("%v: grid %d, workspace %d; want %d blocks, %d bytes", c.s, l.Grid[0], pl.WorkspaceBytes, c.grid, c.grid*2*128*64*4)
		}
		if l.Args[10] != ptr(BufWork, 0) || l.Args[11] != (Arg{Kind: ArgPtr, Buf: BufTable}) {
			t.Errorf("%v: stream args %+v", c.s, l.Args[10:])
		}
		tb := pl.TableBytes(func(Buffer, int) uint64 { return 1 })
		if len(tb) != c.grid*2*4 || strings.Trim(string(tb), "\x00") != "" {
			t.Errorf("%v: flags table %d bytes, want %d zeros", c.s, len(tb), c.grid*8)
		}
	}
	g := wgmmaProblem(t)
	gv, err := g.ResolveVariant("wgmma?schedule=streamk")
	if err != nil {
		t.Fatal(err)
	}
	s := Shape{M: []int{80, 176, 1}, N: 4096, K: 7168}
	pl, err := gv.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	tiles := (1 + 2 + 1) * (4096 / 128)
	tilesOff := ceilDiv(3*fgGroupBytes, 16) * 16
	flagsOff := tilesOff + 16*tiles
	// Work items: every (tile, K chunk) pair, so the engine's cap keeps 132 blocks.
	if l.Grid[0] != 132 || l.Tiles != tiles*(7168/128) || l.Args[4] != (Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(flagsOff)}) || l.Args[3] != ptr(BufWork, 0) {
		t.Errorf("group stream-K launch %+v", l)
	}
	tb := pl.TableBytes(func(Buffer, int) uint64 { return 1 })
	if len(tb) != flagsOff+132*8 || strings.Trim(string(tb[flagsOff:]), "\x00") != "" {
		t.Errorf("group table %d bytes, want %d with zero flags last", len(tb), flagsOff+132*8)
	}
}

// tokens=once: a first launch (wg_tokens) decodes every (token tile, K
// chunk) stage into the workspace after stream-K's partial sums, and the
// GEMM gets its address; the group table's tile entries name their token
// tile (pad), the dual table holds the token operand as one group.
func TestWgmmaTokensOncePlan(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	le := binary.LittleEndian
	addr := func(b Buffer, g int) uint64 { return uint64(b)<<32 | uint64(g)<<16 }
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant("wgmma?tokens=once&schedule=streamk")
	if err != nil {
		t.Fatal(err)
	}
	if d := v.Defines(); d["WG_TOK"] != "1" || d["WG_SK"] != "1" {
		t.Errorf("defines %v", d)
	}
	if e := v.KernelNames(); strings.Join(e, " ") != "wg_tokens wg_group_gemm" {
		t.Errorf("entries %v", e)
	}
	s := Shape{M: []int{80, 176, 1}, N: 256, K: 1024}
	pl, err := v.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	// Token tiles: 1 + 2 + 1, 8 chunks each, one 32 KB stage per pair.
	tokTiles, kch, stage := 4, 8, 128*256
	grid := 8 * kch // stream-K's blocks: one per (tile, chunk) of the 8 tiles, under 132
	partials := int64(grid) * 2 * 128 * 64 * 4
	tokOff := (partials + 1023) &^ 1023
	if len(pl.Launches) != 2 || pl.WorkspaceBytes != tokOff+int64(tokTiles*kch*stage) {
		t.Fatalf("%d launches, workspace %d", len(pl.Launches), pl.WorkspaceBytes)
	}
	pre, gemm := pl.Launches[0], pl.Launches[1]
	if pre.Kernel != "wg_tokens" || pre.Grid[0] != uint32(tokTiles*kch) || pre.Block[0] != 256 || pre.SharedBytes != uint32(stage+1024) ||
		pre.Args[0] != (Arg{Kind: ArgPtr, Buf: BufTable}) || pre.Args[1] != i32(3) || pre.Args[2] != (Arg{Kind: ArgPtr, Buf: BufWork, Value: tokOff}) {
		t.Errorf("decode launch %+v", pre)
	}
	if gemm.Kernel != "wg_group_gemm" || len(gemm.Args) != 6 || gemm.Args[5] != (Arg{Kind: ArgPtr, Buf: BufWork, Value: tokOff}) || gemm.Args[3] != ptr(BufWork, 0) {
		t.Errorf("GEMM launch %+v", gemm)
	}
	tb := pl.TableBytes(addr)
	tilesOff := ceilDiv(3*fgGroupBytes, 16) * 16
	first := []int{0, 1, 3} // token tiles of groups 0 (M 80), 1 (176), 2 (1)
	tiles := FusedTiles(s, v.Knobs)
	for i, ft := range tiles {
		if got := le.Uint32(tb[tilesOff+16*i+12:]); got != uint32(first[ft.Group]+ft.M0/128) {
			t.Errorf("tile %d (group %d, m0 %d): token tile %d, want %d", i, ft.Group, ft.M0, got, first[ft.Group]+ft.M0/128)
		}
	}
	if f := tb[tilesOff+16*len(tiles):]; len(f) != grid*8 || strings.Trim(string(f), "\x00") != "" {
		t.Errorf("flags %d bytes", len(f))
	}

	d, _ := LookupProblem("nvfp4_dual_gemm")
	dv, err := d.ResolveVariant("wgmma?tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	ds := Shape{M: []int{129}, N: 256, K: 640}
	dp, err := dv.Plan(ds, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(dp.Launches) != 2 || dp.Launches[0].Grid[0] != 2*5 || dp.WorkspaceBytes != int64(2*5*stage) {
		t.Fatalf("dual: %d launches, workspace %d", len(dp.Launches), dp.WorkspaceBytes)
	}
	dg := dp.Launches[1]
	if dg.Kernel != "wg_dual_gemm" || dg.Args[12] != (Arg{Kind: ArgPtr, Buf: BufWork}) || dg.Args[10] != (Arg{Kind: ArgI64}) {
		t.Errorf("dual GEMM launch %+v", dg)
	}
	dt := dp.TableBytes(addr)
	if len(dt) != fgGroupBytes || le.Uint64(dt) != addr(BufA, 0) || le.Uint64(dt[8:]) != addr(BufSA, 0) || le.Uint32(dt[40:]) != 129 || le.Uint32(dt[48:]) != 640 {
		t.Errorf("dual table % x", dt)
	}
	wantKnobErrors(t, p, map[string]string{"wgmma?tokens=twice": "not allowed", "wgmma?tokens=once&stages=5": "not allowed"})
	fit, err := p.ResolveVariant("wgmma?tail_width=fit&registers=split&tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	if d := fit.Defines(); d["WG_FIT"] != "1" || d["WG_CREGS"] != "224" || d["WG_TOK"] != "1" || d["WG_MB"] != "1" {
		t.Errorf("fit, split, once: defines %v", d)
	}
}

// schedule=auto stands for two modules, whole tiles and stream-K, and the
// shape picks stream-K only where whole tiles fill under 80% of their
// waves: the dual GEMM's bench3 (96 tiles on 132 SMs) and bench4 (192
// tiles, 73% of two waves), not bench1 (128 tiles, 97% of one wave) or
// bench2 (256 tiles, 97% of two).
func TestWgmmaAutoSchedule(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	v, names := dualCandidates(t, "wgmma?schedule=auto")
	if strings.Join(names, " ") != "wgmma wgmma?schedule=streamk" {
		t.Errorf("candidates %v", names)
	}
	for _, c := range []struct {
		m, n int
		want string
		grid int
	}{{512, 3072, "wgmma?schedule=streamk", 132}, {256, 4096, "wgmma", 128}, {512, 4096, "wgmma", 132}, {256, 3072, "wgmma?schedule=streamk", 132}} {
		s := Shape{M: []int{c.m}, N: c.n, K: 7168}
		cv, err := v.Resolve(s, lim)
		if err != nil || cv.Name != c.want {
			t.Errorf("M %d N %d: resolves to %q (%v), want %q", c.m, c.n, cv.Name, err, c.want)
		}
		pl, err := v.Plan(s, lim)
		if err != nil || pl.Resolved != c.want || int(pl.Launches[0].Grid[0]) != c.grid {
			t.Errorf("M %d N %d: plan %+v (%v), want %s on %d blocks", c.m, c.n, pl, err, c.want, c.grid)
		}
	}
	for _, c := range []struct {
		tiles, chunks, sms int
		want               bool
	}{{192, 56, 132, true}, {256, 56, 132, false}, {352, 56, 132, false}, {128, 56, 132, false}, {200, 56, 132, true},
		{96, 32, 132, true}, {120, 56, 132, false}, {400, 56, 0, false},
		// Too little work to cut: 8 tiles of 8 chunks, 96 of 5 (under 4 per SM).
		{8, 8, 132, false}, {96, 5, 132, false}, {96, 6, 132, true}} {
		if got := wgmmaAutoStreamK(c.tiles, c.chunks, c.sms); got != c.want {
			t.Errorf("wgmmaAutoStreamK(%d, %d, %d) = %v, want %v", c.tiles, c.chunks, c.sms, got, c.want)
		}
	}
	// A test shape of the group GEMM (two groups, K 640): whole tiles.
	g, _ := LookupProblem("nvfp4_group_gemm")
	gv, err := g.ResolveVariant("wgmma?schedule=auto")
	if err != nil {
		t.Fatal(err)
	}
	if cv, err := gv.Resolve(Shape{M: []int{128, 129}, N: 256, K: 640}, lim); err != nil || cv.Name != "wgmma" {
		t.Errorf("a small shape resolves to %q (%v), want whole tiles", cv.Name, err)
	}
}

// wantKnobErrors checks that each spec of p is refused with a KnobError
// whose message contains its want.
func wantKnobErrors(t *testing.T, p *Problem, specs map[string]string) {
	t.Helper()
	for spec, want := range specs {
		_, err := p.ResolveVariant(spec)
		var ke *KnobError
		if err == nil || !errors.As(err, &ke) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: error %v, want a KnobError containing %q", p.Name, spec, err, want)
		}
	}
}

// The dual GEMM's tile_n=auto: its candidates are the 64-column tile (3
// stages, even registers) and the 128-column one (2 stages, split), each
// with both schedules under schedule=auto; a shape gets the 128-column tile
// where its tiles fill at least 70% of the SMs, and then its schedule; auto
// is refused where it would override a knob given explicitly.
func TestWgmmaAutoTile(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	v, names := dualCandidates(t, "wgmma?tile_n=auto&schedule=auto&decode=prmt")
	d, _ := LookupProblem("nvfp4_dual_gemm")
	want := "wgmma?decode=prmt wgmma?schedule=streamk&decode=prmt wgmma?tile_n=128&stages=2&registers=split&decode=prmt " +
		"wgmma?tile_n=128&stages=2&schedule=streamk&registers=split&decode=prmt"
	if strings.Join(names, " ") != want {
		t.Errorf("candidates %v", names)
	}
	for _, c := range []struct {
		m, n int
		want string
	}{
		{256, 4096, "wgmma?decode=prmt"},                                                      // 128-column: 64 tiles (48%); 64-column: 128 whole tiles
		{512, 4096, "wgmma?tile_n=128&stages=2&registers=split&decode=prmt"},                  // 128 tiles (97%)
		{256, 3072, "wgmma?schedule=streamk&decode=prmt"},                                     // 48 (36%); then 96 tiles, 73%: stream-K
		{512, 3072, "wgmma?tile_n=128&stages=2&schedule=streamk&registers=split&decode=prmt"}, // 96 (73%), stream-K
	} {
		s := Shape{M: []int{c.m}, N: c.n, K: 7168}
		cv, err := v.Resolve(s, lim)
		if err != nil || cv.Name != c.want {
			t.Errorf("M %d N %d: resolves to %q (%v), want %q", c.m, c.n, cv.Name, err, c.want)
		}
		if pl, err := v.Plan(s, lim); err != nil || pl.Resolved != c.want {
			t.Errorf("M %d N %d: plan (%v) resolved to %q, want %s", c.m, c.n, err, pl.Resolved, c.want)
		}
	}
	for _, c := range []struct {
		tiles, sms int
		want       bool
	}{{128, 132, true}, {96, 132, true}, {93, 132, true}, {92, 132, false}, {64, 132, false}, {48, 132, false}, {400, 0, false}} {
		if got := wgmmaAutoTile(c.tiles, c.sms); got != c.want {
			t.Errorf("wgmmaAutoTile(%d, %d) = %v, want %v", c.tiles, c.sms, got, c.want)
		}
	}
	wantKnobErrors(t, d, map[string]string{
		"wgmma?tile_n=auto&stages=2":                        "defaults",
		"wgmma?tile_n=auto&registers=split":                 "defaults",
		"wgmma?tile_n=auto&tile_m=64":                       "tile_m=128",
		"wgmma?tile_n=auto&registers=split&pipeline=chunks": "defaults",
	})
	// The group GEMM: 128 or 256 weight rows; the four benchmark shapes
	// have 176, 364, 60 and 64 tiles of 256 rows.
	g, _ := LookupProblem("nvfp4_group_gemm")
	gv, err := g.ResolveVariant("wgmma?tile_n=auto&schedule=auto&decode=prmt")
	if err != nil {
		t.Fatal(err)
	}
	wide, narrow := "wgmma?tile_n=256&stages=2&schedule=streamk&registers=split&decode=prmt", "wgmma?decode=prmt"
	for i, s := range g.Benchmarks {
		want := []string{wide, "wgmma?tile_n=256&stages=2&registers=split&decode=prmt", narrow, narrow}[i]
		if cv, err := gv.Resolve(s, lim); err != nil || cv.Name != want {
			t.Errorf("group benchmark %d: resolves to %q (%v), want %q", i, cv.Name, err, want)
		}
	}
	wantKnobErrors(t, g, map[string]string{"wgmma?tile_n=auto&registers=split": "defaults", "wgmma?tile_n=auto&tile_m=64": "tile_m=128"})
	// With tail_width=fit both candidates take the register split (four
	// wgmma widths), and stream-K runs with fit: the benchmark shapes
	// resolve as without it.
	fv, err := g.ResolveVariant("wgmma?tile_n=auto&schedule=auto&tail_width=fit&decode=prmt&tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range g.Benchmarks {
		want := []string{
			"wgmma?tile_n=256&stages=2&tail_width=fit&schedule=streamk&registers=split&decode=prmt&tokens=once",
			"wgmma?tile_n=256&stages=2&tail_width=fit&registers=split&decode=prmt&tokens=once",
			"wgmma?tail_width=fit&registers=split&decode=prmt&tokens=once",
			"wgmma?tail_width=fit&registers=split&decode=prmt&tokens=once"}[i]
		if cv, err := fv.Resolve(s, lim); err != nil || cv.Name != want {
			t.Errorf("fit: group benchmark %d: resolves to %q (%v), want %q", i, cv.Name, err, want)
		}
	}
}

// dualCandidates resolves spec on the dual GEMM and names its candidates.
func dualCandidates(t *testing.T, spec string) (Variant, []string) {
	t.Helper()
	d, _ := LookupProblem("nvfp4_dual_gemm")
	v, err := d.ResolveVariant(spec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range v.Candidates() {
		names = append(names, c.Name)
	}
	return v, names
}

// overlap=pdl: the GEMM launch (and only it) is marked to overlap the
// decode-ahead launch; without tokens=once there is nothing to overlap.
func TestWgmmaOverlapPlan(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	for _, name := range []string{"nvfp4_group_gemm", "nvfp4_dual_gemm"} {
		p, err := LookupProblem(name)
		if err != nil {
			t.Fatal(err)
		}
		s := Shape{M: []int{129}, N: 256, K: 640}
		for spec, want := range map[string]bool{"wgmma?tokens=once&overlap=pdl": true, "wgmma?tokens=once": false} {
			v, err := p.ResolveVariant(spec)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := v.Plan(s, lim)
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Launches) != 2 || pl.Launches[0].Overlap || pl.Launches[1].Overlap != want {
				t.Errorf("%s %s: launches %+v, want the GEMM's Overlap %v", name, spec, pl.Launches, want)
			}
			// The griddepcontrol instructions are compiled only where used.
			if d := v.Defines()["WG_PDL"]; d != map[bool]string{true: "1", false: "0"}[want] {
				t.Errorf("%s %s: WG_PDL %q", name, spec, d)
			}
		}
		wantKnobErrors(t, p, map[string]string{"wgmma?overlap=pdl": "tokens=once", "wgmma?overlap=ready": "tokens=once", "wgmma?overlap=always": "not allowed"})
	}
}

// overlap=ready: the GEMM launched overlapped as with pdl, and both
// launches given the table's ready counts (two u32 per token tile, zeros,
// after the stream-K flags); the GEMM also the chunk reads per token tile
// (K chunks x the tiles of its rows or columns); whole tiles and stream-K,
// both problems.
func TestWgmmaReadyPlan(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	noAddr := func(Buffer, int) uint64 { return 0 }
	for _, c := range []struct {
		problem, spec   string
		s               Shape
		tokTiles, tiles int
	}{
		{"nvfp4_group_gemm", "wgmma?tokens=once&overlap=ready", Shape{M: []int{129, 7}, N: 256, K: 640}, 3, 2},
		{"nvfp4_group_gemm", "wgmma?tokens=once&overlap=ready&schedule=streamk", Shape{M: []int{129, 7}, N: 256, K: 640}, 3, 2},
		{"nvfp4_dual_gemm", "wgmma?tokens=once&overlap=ready", Shape{M: []int{300}, N: 320, K: 384}, 3, 5},
		{"nvfp4_dual_gemm", "wgmma?tokens=once&overlap=ready&schedule=streamk", Shape{M: []int{300}, N: 320, K: 384}, 3, 5},
	} {
		p, err := LookupProblem(c.problem)
		if err != nil {
			t.Fatal(err)
		}
		plan := func(spec string) (Variant, *Plan) {
			v, err := p.ResolveVariant(spec)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := v.Plan(c.s, lim)
			if err != nil {
				t.Fatal(err)
			}
			return v, pl
		}
		v, rp := plan(c.spec)
		_, pp := plan(strings.Replace(c.spec, "overlap=ready", "overlap=pdl", 1))
		if d := v.Defines(); d["WG_RDY"] != "1" || d["WG_PDL"] != "1" {
			t.Errorf("%s %s: defines %v, want WG_RDY and WG_PDL 1", c.problem, c.spec, d)
		}
		tb, pb := rp.TableBytes(noAddr), pp.TableBytes(noAddr)
		if len(tb) != len(pb)+8*c.tokTiles || string(tb[:len(pb)]) != string(pb) {
			t.Errorf("%s %s: table %d bytes, want pdl's %d and two zero counts per token tile after them", c.problem, c.spec, len(tb), len(pb))
			continue
		}
		for _, b := range tb[len(pb):] {
			if b != 0 {
				t.Errorf("%s %s: ready counts not uploaded as zeros", c.problem, c.spec)
				break
			}
		}
		tok, gemm := rp.Launches[0], rp.Launches[1]
		ptok, pgemm := pp.Launches[0], pp.Launches[1]
		want := Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(len(pb))}
		if len(tok.Args) != len(ptok.Args)+1 || tok.Args[len(tok.Args)-1] != want {
			t.Errorf("%s %s: wg_tokens args %+v, want pdl's then the counts at %d", c.problem, c.spec, tok.Args, len(pb))
		}
		readers := i32(c.s.K / 128 * c.tiles)
		if len(gemm.Args) != len(pgemm.Args)+2 || gemm.Args[len(gemm.Args)-2] != want || gemm.Args[len(gemm.Args)-1] != readers || !gemm.Overlap {
			t.Errorf("%s %s: GEMM args %+v (overlap %v), want pdl's then the counts and %d chunk reads", c.problem, c.spec, gemm.Args, gemm.Overlap, readers.Value)
		}
	}
}

// prefetch=next changes only the kernel (WG_PF): the launches, grid,
// workspace and tables are those of prefetch=none, on whole tiles and
// under stream-K, for both problems and with the best rungs' knobs.
func TestWgmmaPrefetch(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	noAddr := func(Buffer, int) uint64 { return 0 }
	for name, base := range map[string]string{
		"nvfp4_group_gemm": "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&consumers=3",
		"nvfp4_dual_gemm":  "wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl",
	} {
		p, err := LookupProblem(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Benchmarks {
			var plans [3]*Plan
			rs := 0 // prefetch=producer's WG_RS
			for i, spec := range []string{base, base + "&prefetch=next", base + "&prefetch=producer"} {
				var def map[string]string
				def, plans[i] = resolvePlan(t, p, spec, s, lim)
				if got, want := def["WG_PF"], []string{"0", "1", "0"}[i]; got != want {
					t.Errorf("%s %v: %s has WG_PF %q, want %s", name, s.M, spec, got, want)
				}
				if got, want := def["WG_PW"], []string{"0", "0", "1"}[i]; got != want {
					t.Errorf("%s %v: %s has WG_PW %q, want %s", name, s.M, spec, got, want)
				}
				rs, _ = strconv.Atoi(def["WG_RS"])
			}
			// The same launches; prefetch=producer's blocks hold the
			// weight ring's 2 x WG_RS mbarriers (8 bytes each) more.
			a := plans[0]
			for j, b := range plans[1:] {
				if len(a.Launches) != len(b.Launches) || a.WorkspaceBytes != b.WorkspaceBytes || string(a.TableBytes(noAddr)) != string(b.TableBytes(noAddr)) {
					t.Errorf("%s %v: plan %d %+v, want prefetch=none's %+v", name, s.M, j+1, b, a)
					continue
				}
				for i := range a.Launches {
					more := uint32(0)
					if j == 1 && a.Launches[i].SharedBytes > 0 && a.Launches[i].Kernel != "wg_tokens" {
						more = uint32(2 * rs * 8)
					}
					if a.Launches[i].Grid != b.Launches[i].Grid || a.Launches[i].Block != b.Launches[i].Block || a.Launches[i].SharedBytes+more != b.Launches[i].SharedBytes {
						t.Errorf("%s %v launch %d: %+v, want %+v with %d more shared bytes", name, s.M, i, b.Launches[i], a.Launches[i], more)
					}
				}
			}
		}
		wantKnobErrors(t, p, map[string]string{
			"wgmma?prefetch=always":   "not allowed",
			"wgmma?prefetch=producer": "tokens=once",
		})
	}
}

// consumers=4 (dual): four consumers of one 64-row block each, two per
// product, and no producer warpgroup (producer=folded, WG_FOLD): 512 threads at 128
// registers, 128 output columns per tile; refused wherever the folded
// producer does not walk whole tiles of decoded-ahead tokens.
func TestWgmmaFourDualConsumers(t *testing.T) {
	d, _ := LookupProblem("nvfp4_dual_gemm")
	v, err := d.ResolveVariant("wgmma?tile_n=128&stages=2&consumers=4&producer=folded&decode=prmt&tokens=once&overlap=pdl")
	if err != nil {
		t.Fatal(err)
	}
	if def := v.Defines(); def["WG_CONS"] != "4" || def["WG_MB"] != "1" || def["WG_FOLD"] != "1" || def["WG_CREGS"] != "0" || def["WG_SK"] != "0" || def["WG_RS"] != "4" || def["WG_PDL"] != "1" {
		t.Errorf("defines %v", def)
	}
	// 2 stages of 32 KB, 4 raw weight stages of 256 x (64 + 16) bytes,
	// four 128 x 144-byte epilogue buffers, the barriers and the slack.
	if sb, want := WgmmaSharedBytes(d.Name, v.Knobs), 2*32768+4*256*80+4*128*144+32+1024; sb != want || sb > hopperSharedOptin {
		t.Errorf("shared bytes %d, want %d (at most %d)", sb, want, hopperSharedOptin)
	}
	s := Shape{M: []int{512}, N: 4096, K: 7168}
	pl, err := v.Plan(s, Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	if g := pl.Launches[1]; g.Block[0] != 512 || g.Tiles != 4*32 || !g.Overlap {
		t.Errorf("GEMM launch %+v, want 512 threads over 128 tiles, overlapped", g)
	}
	two, err := d.ResolveVariant("wgmma?tile_n=128&stages=2&registers=split&tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	if WgmmaThreads(d.Name, two.Knobs) != 384 || two.Defines()["WG_FOLD"] != "0" || two.Defines()["WG_MB"] != "2" {
		t.Errorf("two consumers: %d threads, defines %v", WgmmaThreads(d.Name, two.Knobs), two.Defines())
	}
	// Two consumers without the producer warpgroup: 256 threads at 248
	// registers, the wide tile without setmaxnreg.
	wide, err := d.ResolveVariant("wgmma?tile_n=128&stages=2&tokens=once&producer=folded")
	if err != nil {
		t.Fatal(err)
	}
	if def := wide.Defines(); WgmmaThreads(d.Name, wide.Knobs) != 256 || def["WG_FOLD"] != "1" || def["WG_CONS"] != "2" || def["WG_MB"] != "2" || def["WG_CREGS"] != "0" {
		t.Errorf("folded wide tile: %d threads, defines %v", WgmmaThreads(d.Name, wide.Knobs), def)
	}
	wantKnobErrors(t, d, map[string]string{
		"wgmma?tile_n=128&stages=2&consumers=4&tokens=once":                                  "producer=folded",
		"wgmma?tile_n=128&stages=2&producer=folded":                                          "tokens=once",
		"wgmma?tokens=once&producer=folded&prefetch=producer":                                "producer=warpgroup",
		"wgmma?tile_n=128&stages=2&consumers=4&producer=folded&tokens=once&schedule=streamk": "schedule=tiles",
		"wgmma?tile_n=128&stages=2&producer=folded&tokens=once&schedule=auto":                "schedule=tiles",
		"wgmma?tile_n=128&stages=2&consumers=4&producer=folded&tokens=once&overlap=ready":    "overlap none or pdl",
		"wgmma?tile_n=64&consumers=4&producer=folded&tokens=once":                            "tile_n=128",
		"wgmma?tile_n=128&stages=2&producer=folded&tokens=once&registers=split":              "registers=even",
		"wgmma?tile_n=128&stages=3&consumers=4&producer=folded&tokens=once":                  "shared memory",
		"wgmma?tile_n=auto&consumers=4&producer=folded&tokens=once":                          "tile_n=128",
	})
}

// consumers=3: 512 threads, 192 weight rows (one 64-row block per
// consumer), the register split at 160 per consumer for 128-token tiles;
// refused without the tokens decoded ahead and with what 160 cannot hold.
func TestWgmmaThreeConsumers(t *testing.T) {
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant("wgmma?tile_n=192&consumers=3&registers=split&tokens=once&decode=prmt")
	if err != nil {
		t.Fatal(err)
	}
	if d := v.Defines(); d["WG_CONS"] != "3" || d["WG_MB"] != "1" || d["WG_CREGS"] != "160" || d["WG_TOK"] != "1" || d["WG_RS"] != "4" {
		t.Errorf("defines %v", d)
	}
	// 3 stages of 32 KB, 4 raw weight stages of 192 x (64 + 16) bytes,
	// three 128 x 144-byte epilogue buffers, the barriers and the slack.
	if sb, want := WgmmaSharedBytes(p.Name, v.Knobs), 3*32768+4*192*80+3*128*144+48+1024; sb != want {
		t.Errorf("shared bytes %d, want %d", sb, want)
	}
	s := Shape{M: []int{300, 64}, N: 4096, K: 1024}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	pl, err := v.Plan(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	tiles := (3 + 1) * ceilDiv(4096, 192)
	if g := pl.Launches[1]; g.Block[0] != 512 || g.Tiles != tiles {
		t.Errorf("GEMM launch %+v, want 512 threads over %d tiles", g, tiles)
	}
	// The 192-row tile on shape s under a schedule: its variant and plan.
	scheduled := func(schedule string) (Variant, *Plan) {
		sv, err := p.ResolveVariant("wgmma?tile_n=192&consumers=3&registers=split&tokens=once&schedule=" + schedule)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := sv.Plan(s, lim)
		if err != nil {
			t.Fatal(err)
		}
		return sv, sp
	}
	_, skp := scheduled("streamk")
	// Stream-K's slots hold three consumers' 64 accumulators x 128 threads.
	if want := int64(132) * 3 * 128 * 64 * 4; skp.WorkspaceBytes < want || skp.WorkspaceBytes > ((want+1023)&^1023)+int64(4*8*32768) {
		t.Errorf("stream-K workspace %d bytes, want the partials' %d then the token stages", skp.WorkspaceBytes, want)
	}
	// schedule=hybrid cuts only the last wave's tiles, with the same slots,
	// flags and grid (WG_SK=2).
	hy, hyp := scheduled("hybrid")
	noAddr := func(Buffer, int) uint64 { return 0 }
	if d := hy.Defines(); d["WG_SK"] != "2" || hyp.WorkspaceBytes != skp.WorkspaceBytes || hyp.Launches[1].Grid != skp.Launches[1].Grid || len(hyp.TableBytes(noAddr)) != len(skp.TableBytes(noAddr)) {
		t.Errorf("hybrid: WG_SK %q, workspace %d, grid %v; want 2 and stream-K's %d, %v and table", d["WG_SK"], hyp.WorkspaceBytes, hyp.Launches[1].Grid, skp.WorkspaceBytes, skp.Launches[1].Grid)
	}
	// schedule=autohybrid: hybrid where the tiles take more than one whole
	// wave and leave a partial one (group bench1: 242 192-row tiles), else
	// auto's rule (bench4: 128 narrow tiles, whole).
	ah, err := p.ResolveVariant("wgmma?tile_n=auto&consumers=3&schedule=autohybrid&tail_width=fit64&decode=prmt&tokens=once&overlap=pdl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Shape
		want string
	}{
		{Shape{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}, "2"},
		{Shape{M: []int{40, 76, 168, 72, 164, 148, 196, 160}, N: 7168, K: 2048}, "2"},
		{Shape{M: []int{192, 320}, N: 3072, K: 4096}, "0"},
		{Shape{M: []int{128, 384}, N: 4096, K: 1536}, "0"},
	} {
		cv, err := ah.Resolve(c.s, lim)
		if err != nil || cv.Defines()["WG_SK"] != c.want {
			t.Errorf("autohybrid %v: resolves to %q (%v), want WG_SK=%s", c.s.M, cv.Name, err, c.want)
		}
	}
	if !wgmmaAutoHybrid(133, 132) || wgmmaAutoHybrid(132, 132) || wgmmaAutoHybrid(264, 132) || wgmmaAutoHybrid(120, 132) {
		t.Error("wgmmaAutoHybrid: want hybrid only past one whole wave with a partial last one")
	}
	// tail_width=fit and fit64: one 64-row block per consumer, so the
	// widths hold 64 accumulators at most (kernel-notes step 17).
	for width, want := range map[string]string{"fit": "1", "fit64": "2"} {
		fv, err := p.ResolveVariant("wgmma?tile_n=192&consumers=3&registers=split&tokens=once&tail_width=" + width)
		if err != nil {
			t.Fatal(err)
		}
		if d := fv.Defines(); d["WG_FIT"] != want || d["WG_CONS"] != "3" || d["WG_CREGS"] != "160" {
			t.Errorf("%s defines %v", width, d)
		}
	}
	small, err := p.ResolveVariant("wgmma?tile_m=64&tile_n=192&consumers=3&tokens=once")
	if err != nil {
		t.Fatal(err)
	}
	if d := small.Defines(); d["WG_CREGS"] != "0" || d["WG_TM"] != "64" {
		t.Errorf("64x192 defines %v (its 64 registers fit the even 88)", d)
	}
	wantKnobErrors(t, p, map[string]string{
		"wgmma?tile_n=192&consumers=3&registers=split":                             "tokens=once",
		"wgmma?tile_n=192&consumers=3&tokens=once":                                 "registers",
		"wgmma?tile_n=128&consumers=3&tokens=once":                                 "192 or 384",
		"wgmma?tile_n=192&tokens=once":                                             "128 or 256",
		"wgmma?tile_n=192&consumers=3&registers=split&tokens=once&pipeline=chunks": "160 registers",
		"wgmma?tile_m=64&tile_n=192&consumers=3&registers=split&tokens=once":       "even budget",
		"wgmma?tile_n=192&consumers=3&registers=split&tokens=once&stages=4":        "shared memory",
		"wgmma?tile_n=384&consumers=3&registers=split&tokens=once":                 "not allowed",
	})
	d, _ := LookupProblem("nvfp4_dual_gemm")
	wantKnobErrors(t, d, map[string]string{"wgmma?consumers=3&tokens=once": "not allowed"})

	// tile_n=auto with consumers=3: the narrow tile on two consumers, the
	// wide one three consumers' 192 rows, taken where its tiles fill 70% of
	// the SMs (the benchmark shapes: 242 and 494 tiles on bench1-2, 80 and
	// 88 on bench3-4).
	auto, err := p.ResolveVariant("wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Shape
		want string
	}{
		{Shape{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}, "wgmma?tile_n=192&registers=split&decode=prmt&tokens=once&overlap=pdl&consumers=3"},
		{Shape{M: []int{192, 320}, N: 3072, K: 4096}, "wgmma?decode=prmt&tokens=once&overlap=pdl"},
		{Shape{M: []int{128, 384}, N: 4096, K: 1536}, "wgmma?decode=prmt&tokens=once&overlap=pdl"},
	} {
		cv, err := auto.Resolve(c.s, lim)
		if err != nil || cv.Name != c.want {
			t.Errorf("%v: resolves to %q (%v), want %q", c.s.M, cv.Name, err, c.want)
		}
	}
	// With tail_width=fit the narrow candidate takes the split as well (two
	// consumers' four widths were serialized at the even budget).
	autoFit, err := p.ResolveVariant("wgmma?tile_n=auto&consumers=3&schedule=auto&tail_width=fit&decode=prmt&tokens=once&overlap=pdl")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[*Shape]string{
		{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}: "wgmma?tile_n=192&tail_width=fit&registers=split&decode=prmt&tokens=once&overlap=pdl&consumers=3",
		{M: []int{128, 384}, N: 4096, K: 1536}:                           "wgmma?tail_width=fit&registers=split&decode=prmt&tokens=once&overlap=pdl",
	} {
		cv, err := autoFit.Resolve(*s, lim)
		if err != nil || cv.Name != want {
			t.Errorf("fit %v: resolves to %q (%v), want %q", s.M, cv.Name, err, want)
		}
	}
}

// SameValues compares fields and custom knobs alike, and only the keys
// named: what the pairwise covers' core selection (WgmmaPairwiseKnobs)
// relies on.
func TestKnobsSameValues(t *testing.T) {
	p := wgmmaProblem(t)
	knobs := func(spec string) Knobs {
		v, err := p.ResolveVariant(spec)
		if err != nil {
			t.Fatal(err)
		}
		return v.Knobs
	}
	def := knobs("wgmma")
	if !knobs("wgmma?stages=2").SameValues(def, WgmmaPairwiseKnobs...) {
		t.Error("a knob outside the keys made the combinations differ")
	}
	for _, spec := range []string{"wgmma?tokens=once", "wgmma?tail_width=fit64&registers=split", "wgmma?prefetch=next", "wgmma?token_wait=early"} {
		if knobs(spec).SameValues(def, WgmmaPairwiseKnobs...) {
			t.Errorf("%s: SameValues with the defaults on %v", spec, WgmmaPairwiseKnobs)
		}
	}
	if !knobs("wgmma?prefetch=next").SameValues(def) {
		t.Error("no keys: want true")
	}
}

// sharedWeights checks p's weights=shared and weights=staged variants at
// stages=2 with tokens=once: their defines (WG_SSA=1 or WG_CSA=1, STAGES=2
// and want), their shared memory as the kernel lays it out (two token
// stages and two stages or buffers of 128 decoded weight rows; shared: the
// producer's raw ring of 128 rows in the token ring's layout; staged: the
// consumers' own rings; the epilogue's staging), and that each of the
// specs, with those three knobs added, is refused on weights.
func sharedWeights(t *testing.T, p *Problem, want map[string]string, refused ...string) {
	t.Helper()
	for _, w := range []string{"shared", "staged"} {
		base := "weights=" + w + "&stages=2&tokens=once"
		v, err := p.ResolveVariant("wgmma?" + base + "&overlap=pdl")
		if err != nil {
			t.Fatal(err)
		}
		def := v.Defines()
		ssa, csa := map[string]string{"shared": "1", "staged": "0"}[w], map[string]string{"shared": "0", "staged": "1"}[w]
		if def["WG_SSA"] != ssa || def["WG_CSA"] != csa || def["STAGES"] != "2" {
			t.Errorf("%s weights=%s: WG_SSA %q, WG_CSA %q, STAGES %q", p.Name, w, def["WG_SSA"], def["WG_CSA"], def["STAGES"])
		}
		for key, x := range want {
			if def[key] != x {
				t.Errorf("%s weights=%s: define %s = %q, want %q", p.Name, w, key, def[key], x)
			}
		}
		tok, astg, ep := 2*128*256, 2*128*256, 2*128*(128+16)
		raw, sc := 4*128*80, 4*128*8 // the producer's ring
		if w == "staged" {
			raw, sc = 4*128*64, 4*128*16 // the consumers' rings
		}
		if sb, x := WgmmaSharedBytes(p.Name, v.Knobs), tok+raw+sc+astg+ep+2*2*8+1024; sb != x {
			t.Errorf("%s weights=%s: %d bytes of shared memory, want %d", p.Name, w, sb, x)
		}
		for _, spec := range refused {
			var ke *KnobError
			if _, err := p.ResolveVariant(spec + "&" + base); !errors.As(err, &ke) || ke.Knob != "weights" {
				t.Errorf("%s %s&%s: %v, want a KnobError on weights", p.Name, spec, base, err)
			}
		}
	}
}

// sampleKnobs calls fn with 4,000 random raw combinations of problem p's
// wgmma knob space (seeded by seed) and the knobs that have the property
// (Free or Narrows); it fails the test where p declares none.
func sampleKnobs(t *testing.T, p *Problem, seed uint64, property string, has func(KnobSpec) bool, fn func(vals map[string]string, marked []KnobSpec)) {
	t.Helper()
	space := families["wgmma"].KnobSpace(p.Name)
	var marked []KnobSpec
	for _, ks := range space {
		if has(ks) {
			marked = append(marked, ks)
		}
	}
	if len(marked) == 0 {
		t.Fatalf("%s: no %s wgmma knob declared", p.Name, property)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(p.Name))))
	for range 4000 {
		vals := map[string]string{}
		for _, ks := range space {
			vals[ks.Key] = ks.Values[rng.IntN(len(ks.Values))]
		}
		fn(vals, marked)
	}
}

// The wgmma knobs declared Free (epilogue, staging) are in no combination
// rule, which the enumeration relies on to skip a refused combination of
// the other knobs at every free value: checked on a fixed sample of raw
// combinations of both problems, refused and accepted alike, each at every
// value of the free knobs.
func TestWgmmaFreeKnobs(t *testing.T) {
	f := families["wgmma"]
	for _, p := range Problems() {
		refused := 0
		sampleKnobs(t, p, 1, "free", func(ks KnobSpec) bool { return ks.Free }, func(vals map[string]string, free []KnobSpec) {
			want := ""
			eachCombination(free, func(fv map[string]string) {
				for key, v := range fv {
					vals[key] = v
				}
				k, err := knobsFrom(p.Name, f, vals)
				if err == nil {
					err = f.Check(p.Name, k)
				}
				got := "valid"
				if err != nil {
					got = "refused"
				}
				if want == "" {
					want = got
				} else if got != want {
					t.Errorf("%s %v: %s at these free values, %s at others", p.Name, vals, got, want)
				}
			})
			if want == "refused" {
				refused++
			}
		})
		if refused == 0 || refused == 4000 {
			t.Errorf("%s: %d of 4000 sampled combinations refused; the sample must hold both kinds", p.Name, refused)
		}
	}
}

// The narrowing knobs (the group GEMM's ranges and token_rows) only add
// rules: on random combinations, one refused with them at their defaults
// is refused at every value of each, so enumerating them late (as free
// knobs) loses no valid combination. The sample must hold refused
// combinations.
func TestWgmmaNarrowingKnobs(t *testing.T) {
	f := families["wgmma"]
	p := wgmmaProblem(t)
	valid := func(vals map[string]string) bool {
		k, err := knobsFrom(p.Name, f, vals)
		return err == nil && f.Check(p.Name, k) == nil
	}
	refused := 0
	sampleKnobs(t, p, 2, "narrowing", func(ks KnobSpec) bool { return ks.Narrows }, func(vals map[string]string, narrow []KnobSpec) {
		for _, ks := range narrow {
			vals[ks.Key] = ks.Default
		}
		if valid(vals) {
			return
		}
		refused++
		for _, ks := range narrow {
			for _, v := range ks.Values {
				w := maps.Clone(vals)
				w[ks.Key] = v
				if valid(w) {
					t.Errorf("%s %v: refused at %s=%s, valid at %s", p.Name, vals, ks.Key, ks.Default, v)
				}
			}
		}
	})
	if refused == 0 {
		t.Errorf("%s: no sampled combination was refused", p.Name)
	}
}

// epilogue=split (dual) and staging=stmatrix (both problems) change only
// the epilogue's code, token_rows=live only the token pass's stores,
// token_copy=width only the producer's copies and token_wait=early only a
// consumer's wait: their define, and the launches, workspace, tables and
// shared memory of the same variant without them, for the best variants
// on every benchmark shape.
func TestWgmmaEpilogueKnobs(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	noAddr := func(Buffer, int) uint64 { return 0 }
	group := "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&consumers=3"
	dual := "wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl"
	for _, c := range []struct{ problem, base, knob, define string }{
		{"nvfp4_dual_gemm", dual, "epilogue=split", "WG_EPI"},
		{"nvfp4_dual_gemm", dual + "&epilogue=split", "staging=stmatrix", "WG_STM"},
		{"nvfp4_group_gemm", group, "staging=stmatrix", "WG_STM"},
		{"nvfp4_group_gemm", group + "&staging=stmatrix", "token_rows=live", "WG_TOKLIVE"},
		{"nvfp4_group_gemm", group + "&staging=stmatrix", "token_copy=width", "WG_TOKW"},
		{"nvfp4_group_gemm", group + "&staging=stmatrix", "token_wait=early", "WG_TWE"},
		{"nvfp4_dual_gemm", dual + "&epilogue=split", "token_wait=early", "WG_TWE"},
	} {
		p, err := LookupProblem(c.problem)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Benchmarks {
			defA, a := resolvePlan(t, p, c.base, s, lim)
			defB, b := resolvePlan(t, p, c.base+"&"+c.knob, s, lim)
			if defA[c.define] != "0" || defB[c.define] != "1" {
				t.Errorf("%s %v: %s %q without %s, %q with it; want 0 and 1", c.problem, s.M, c.define, defA[c.define], c.knob, defB[c.define])
			}
			if len(a.Launches) != len(b.Launches) || a.WorkspaceBytes != b.WorkspaceBytes || string(a.TableBytes(noAddr)) != string(b.TableBytes(noAddr)) {
				t.Fatalf("%s %v: %s plans a different launch", c.problem, s.M, c.knob)
			}
			for j := range a.Launches {
				if a.Launches[j].SharedBytes != b.Launches[j].SharedBytes {
					t.Errorf("%s %v launch %d: shared bytes %d with %s, %d without", c.problem, s.M, j, b.Launches[j].SharedBytes, c.knob, a.Launches[j].SharedBytes)
				}
			}
		}
	}
}

// resolvePlan is spec's defines and plan on shape s.
func resolvePlan(t *testing.T, p *Problem, spec string, s Shape, lim Limits) (map[string]string, *Plan) {
	t.Helper()
	cv := resolveFor(t, p, spec, s, lim)
	pl, err := cv.Plan(s, lim)
	if err != nil {
		t.Fatalf("%s %v: %v", spec, s.M, err)
	}
	return cv.Defines(), pl
}

// resolveFor is spec resolved for shape s.
func resolveFor(t *testing.T, p *Problem, spec string, s Shape, lim Limits) Variant {
	t.Helper()
	v, err := p.ResolveVariant(spec)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := v.Resolve(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	return cv
}

// The dual GEMM's tile_m=auto: the tall 256x64 tile where its tiles fill
// 70% of the SMs without more token rows than 128-token tiles, else
// tile_n=auto's pick; refused without tile_n=auto or tokens=once, and on
// the group GEMM.
func TestWgmmaAutoTall(t *testing.T) {
	d, err := LookupProblem("nvfp4_dual_gemm")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	spec := "wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split"
	v, err := d.ResolveVariant(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m, n int
		want string // TileM x TileN
	}{
		{512, 4096, "256x64"},  // 128 tall tiles: 97% of the SMs (bench2)
		{512, 3072, "256x64"},  // 96: 73% (bench4)
		{256, 4096, "128x64"},  // 64 tall tiles: 48%; tile_n=auto's narrow tile (bench1)
		{256, 3072, "128x64"},  // bench3
		{300, 8192, "128x128"}, // 256 tall tiles, but 512 token rows where 128-token tiles compute 384: the wide tile
		{640, 4096, "128x128"}, // 768 rows against 640: the wide tile (160 tiles)
		{768, 4096, "256x64"},  // 192 tall tiles, 768 rows either way
		{1024, 1024, "128x64"}, // 64 tall and 64 wide tiles (48%): the narrow tile
	} {
		s := Shape{M: []int{c.m}, N: c.n, K: 1024}
		cv, err := v.Resolve(s, lim)
		if err != nil {
			t.Fatalf("M %d N %d: %v", c.m, c.n, err)
		}
		if got := fmt.Sprintf("%dx%d", cv.Knobs.TileM, cv.Knobs.TileN); got != c.want {
			t.Errorf("M %d N %d: %s resolves to %s (%s), want %s", c.m, c.n, spec, got, cv.Name, c.want)
		}
	}
	for _, bad := range []struct{ problem, spec string }{
		{"nvfp4_dual_gemm", "wgmma?tile_m=auto&decode=prmt&tokens=once"},
		{"nvfp4_dual_gemm", "wgmma?tile_m=auto&tile_n=auto"},
		{"nvfp4_group_gemm", "wgmma?tile_m=auto&tile_n=auto&tokens=once"},
	} {
		p, err := LookupProblem(bad.problem)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.ResolveVariant(bad.spec); err == nil {
			t.Errorf("%s %s: accepted", bad.problem, bad.spec)
		}
	}
}

// overlap=prologue: no wg_tokens launch; the GEMM (WG_PRO, without
// WG_PDL) takes the number of groups and a table offset as its last two
// arguments, where the table ends with a zero flag per token stage; the
// workspace is tokens=once's. Refused without tokens=once, folded or with
// weights in shared memory.
func TestWgmmaProloguePlan(t *testing.T) {
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	noAddr := func(Buffer, int) uint64 { return 0 }
	for _, c := range []struct{ problem, spec string }{
		{"nvfp4_group_gemm", "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&consumers=3"},
		{"nvfp4_dual_gemm", "wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&epilogue=split"},
	} {
		p, err := LookupProblem(c.problem)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Benchmarks {
			dp, pdl := resolvePlan(t, p, c.spec+"&overlap=pdl", s, lim)
			dq, pro := resolvePlan(t, p, c.spec+"&overlap=prologue", s, lim)
			if dq["WG_PRO"] != "1" || dq["WG_PDL"] != "0" || dp["WG_PRO"] != "0" {
				t.Fatalf("%s %v: defines %v", c.problem, s.M, dq)
			}
			if len(pdl.Launches) != 2 || len(pro.Launches) != 1 || pro.Launches[0].Kernel != pdl.Launches[1].Kernel {
				t.Fatalf("%s %v: %d launches with prologue, %d with pdl", c.problem, s.M, len(pro.Launches), len(pdl.Launches))
			}
			if pro.WorkspaceBytes != pdl.WorkspaceBytes {
				t.Errorf("%s %v: workspace %d, pdl's %d", c.problem, s.M, pro.WorkspaceBytes, pdl.WorkspaceBytes)
			}
			g, gp := pro.Launches[0], pdl.Launches[1]
			if len(g.Args) != len(gp.Args)+2 || g.Args[len(g.Args)-2] != i32(len(s.M)) {
				t.Fatalf("%s %v: args %+v against %+v", c.problem, s.M, g.Args, gp.Args)
			}
			tb, tbp := pro.TableBytes(noAddr), pdl.TableBytes(noAddr)
			tokTiles := 0
			for _, m := range s.M {
				tokTiles += ceilDiv(m, resolveFor(t, p, c.spec, s, lim).Knobs.TileM)
			}
			off := g.Args[len(g.Args)-1]
			if off.Buf != BufTable || off.Value != int64(len(tbp)) || len(tb) != len(tbp)+4*tokTiles*(s.K/128) ||
				string(tb[:len(tbp)]) != string(tbp) || strings.Trim(string(tb[len(tbp):]), "\x00") != "" {
				t.Errorf("%s %v: flags at %+v, table %d bytes after pdl's %d", c.problem, s.M, off, len(tb), len(tbp))
			}
		}
	}
	p := wgmmaProblem(t)
	wantKnobErrors(t, p, map[string]string{
		"wgmma?overlap=prologue":                                     "tokens=once",
		"wgmma?stages=2&tokens=once&overlap=prologue&weights=staged": "weights",
	})
	d, _ := LookupProblem("nvfp4_dual_gemm")
	wantKnobErrors(t, d, map[string]string{
		"wgmma?tile_n=128&tokens=once&overlap=prologue&consumers=4&producer=folded": "folded",
	})
}
