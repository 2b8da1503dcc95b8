package kernels_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// compileJob is one distinct module: a variant's source with one define set
// for one arch. Launch modes share a module (launch is host-side only).
type compileJob struct {
	v    kernels.Variant
	arch string
	// extra defines on top of v.Defines() (the wgmma front-end check).
	extra map[string]string
}

var (
	regsRE  = regexp.MustCompile(`Used (\d+) registers`)
	spillRE = regexp.MustCompile(`(\d+) bytes spill stores`)
	stackRE = regexp.MustCompile(`(\d+) bytes stack frame`)
)

// ptxasFigures sums what ptxas -v reports over a module's entry points:
// the most registers of any entry, total spill-store and stack bytes.
func ptxasFigures(log string) (regs, spill, stack int) {
	for _, m := range regsRE.FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		regs = max(regs, n)
	}
	for _, m := range spillRE.FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		spill += n
	}
	for _, m := range stackRE.FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		stack += n
	}
	return
}

func definesKey(d map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(d) {
		fmt.Fprintf(&b, "%s=%s;", k, d[k])
	}
	return b.String()
}

// exhaustiveEnv turns on TestCompileDeclaredSpace: about 264 NVRTC modules,
// six minutes on CI's two cores. .ci/run sets it in a step of its own;
// `go test ./...` runs TestCompileFamilies instead.
const exhaustiveEnv = "PITCHTANK_EXHAUSTIVE"

// compileEnv runs TestCompileFamilies outside CI.
const compileEnv = "PITCHTANK_COMPILE"

// nvrtcTargets returns this NVRTC's version, its major number and the archs
// the compile tests build for: sm_80 and sm_90, and sm_90a where the NVRTC
// knows it (12.0+). Without NVRTC the test skips, or fails under
// PITCHTANK_REQUIRE_NVRTC=1 (CI).
func nvrtcTargets(t *testing.T) (ver string, major int, archs []string) {
	t.Helper()
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required (PITCHTANK_REQUIRE_NVRTC=1) but unavailable: %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v); set PITCHTANK_REQUIRE_NVRTC=1 to make this a failure", err)
	}
	archs = []string{"sm_80", "sm_90"}
	major, _ = strconv.Atoi(strings.Split(ver, ".")[0])
	if major >= 12 {
		archs = append(archs, "sm_90a")
	} else {
		t.Logf("NVRTC %s predates sm_90a (12.0+): compiling for sm_80 and sm_90 only", ver)
	}
	return ver, major, archs
}

// jobSet collects the distinct modules to compile.
type jobSet struct {
	major   int // NVRTC's major version
	jobs    []compileJob
	seen    map[string]bool
	skipped map[string]bool // builds this NVRTC or arch cannot make, logged
}

func newJobSet(major int) *jobSet {
	return &jobSet{major: major, seen: map[string]bool{}, skipped: map[string]bool{}}
}

// add queues v for each of archs, once per distinct module.
func (s *jobSet) add(v kernels.Variant, archs []string) {
	for _, a := range archs {
		// The TMA epilogue (cp.async.bulk) exists from sm_90 and PTX 8.0
		// (CUDA 12.0): the source refuses other builds with #error and
		// kernels.Plan refuses devices below sm_90, so those builds are
		// skipped here (NVRTC 11.8 in CI compiles none of them; the
		// device tests build them with the device's NVRTC).
		d := v.Defines()
		if (d["FG_EPI_TMA"] == "1" || d["EPI_TMA"] == "1") && (a == "sm_80" || s.major < 12) {
			s.skipped[v.Name+" "+a] = true
			continue
		}
		key := v.Problem + "|" + v.SourceFile + "|" + definesKey(v.Defines()) + "|" + a
		if !s.seen[key] {
			s.seen[key] = true
			s.jobs = append(s.jobs, compileJob{v: v, arch: a})
		}
	}
	// The wgmma kernel's body exists only for sm_90a (NVRTC 12+); built
	// for sm_80/sm_90 it is a trap. So that an NVRTC without sm_90a
	// still checks it, its sm_90a path also goes through the C++ front
	// end to PTX for compute_90 with the arch-feature macro set: types,
	// templates and every wgmma width instantiated. The inline PTX
	// (wgmma, mbarrier) is assembled only by the device's NVRTC 13.
	if v.Base == "wgmma" && s.major < 12 {
		key := v.Problem + "|" + v.SourceFile + "|" + definesKey(v.Defines()) + "|frontend"
		if !s.seen[key] {
			s.seen[key] = true
			s.jobs = append(s.jobs, compileJob{v: v, arch: "compute_90", extra: map[string]string{"__CUDA_ARCH_FEAT_SM90_ALL": "1"}})
		}
	}
}

// familyCombinations returns the concrete variants of family v's declared
// space. A tile_m/tile_n=auto combination compiles as its candidates
// (engine.Build), which must be concrete combinations of the same space:
// they are checked here and compiled (or covered) with the rest.
func familyCombinations(t *testing.T, p *kernels.Problem, v kernels.Variant) []kernels.Variant {
	t.Helper()
	combos := p.VariantCombinations(v.Base)
	if len(combos) == 0 {
		t.Fatalf("%s %s: empty knob space", p.Name, v.Base)
	}
	var vs, autos []kernels.Variant
	names := map[string]bool{}
	for _, k := range combos {
		kv, err := p.WithKnobs(v, k)
		if err != nil {
			t.Fatalf("%s: enumerated combination rejected: %v", p.Name, err)
		}
		names[kv.Name] = true
		if len(kv.Candidates()) != 1 || kv.Candidates()[0].Name != kv.Name {
			autos = append(autos, kv)
			continue
		}
		vs = append(vs, kv)
	}
	for _, av := range autos {
		for _, cv := range av.Candidates() {
			if !names[cv.Name] {
				t.Errorf("%s %s: candidate %s is not in the declared space", p.Name, av.Name, cv.Name)
			}
		}
	}
	return vs
}

// splitTMA separates the tma-epilogue builds, which an NVRTC before 12 or
// sm_80 skips, so that each side gets its own pairwise cover and the pairs
// of the other knobs are compiled everywhere.
func splitTMA(vs []kernels.Variant) (simt, tma []kernels.Variant) {
	for _, kv := range vs {
		if kv.Knobs.Epilogue == "tma" {
			tma = append(tma, kv)
		} else {
			simt = append(simt, kv)
		}
	}
	return simt, tma
}

// TestCompileFamilies is the compile check of `go test ./...`: every
// variant as declared (each family's default and the reference) for every
// arch, with the spill limits, and for each family a cover of its declared
// space in which every define value that occurs in a valid combination is
// compiled at least once, for the newest arch this NVRTC knows. About 30
// modules (half a minute on two cores) against TestCompileDeclaredSpace's
// 264 and their pairwise covers: a broken kernel or knob value still fails
// `go test ./...` wherever NVRTC is installed.
func TestCompileFamilies(t *testing.T) {
	// 29 NVRTC modules, about 40 s of both cores: too slow for the README's
	// go test ./... (under 2 minutes on 2 cores), so it runs where asked.
	// .ci/run asks with PITCHTANK_REQUIRE_NVRTC=1 in its test step.
	if os.Getenv("PITCHTANK_REQUIRE_NVRTC") != "1" && os.Getenv(compileEnv) != "1" {
		t.Skipf("compiles 29 NVRTC modules (about 40 s): set %s=1 to run it here (.ci/run sets PITCHTANK_REQUIRE_NVRTC=1)", compileEnv)
	}
	ver, major, archs := nvrtcTargets(t)
	s := newJobSet(major)
	newest := archs[len(archs)-1:]
	for _, p := range kernels.Problems() {
		for _, v := range p.Variants() {
			s.add(v, archs)
			if v.Reference {
				continue
			}
			all := familyCombinations(t, p, v)
			simt, tma := splitTMA(all)
			cover := eachValue(v, simt)
			if len(tma) > 0 {
				cover = append(cover, eachValue(tma[0], tma)...)
			}
			t.Logf("%s %s: %d of %d combinations build every value", p.Name, v.Base, len(cover), len(all))
			for _, kv := range cover {
				s.add(kv, newest)
			}
		}
	}
	compileJobs(t, ver, s)
}

// TestCompileDeclaredSpace compiles every variant and every valid knob
// combination of the declared space with NVRTC for sm_80 and sm_90 (and
// sm_90a where this NVRTC knows it), as CI does with Debian's NVRTC 11.8.
// It runs only with PITCHTANK_EXHAUSTIVE=1 (.ci/run's own step).
func TestCompileDeclaredSpace(t *testing.T) {
	if os.Getenv(exhaustiveEnv) != "1" {
		t.Skipf("the exhaustive compile (every module of the declared space, with pairwise covers where a family's full product is too large; several minutes on two cores) runs with %s=1, as .ci/run does; TestCompileFamilies compiles the defaults and every knob value once", exhaustiveEnv)
	}
	ver, major, archs := nvrtcTargets(t)
	s := newJobSet(major)
	for _, p := range kernels.Problems() {
		for _, v := range p.Variants() {
			s.add(v, archs)
			if v.Reference {
				continue
			}
			vs := familyCombinations(t, p, v)
			if v.Base == "fused" {
				// The fused space has more compile-relevant knobs than 2 CPUs
				// compile in the time budget: every pair of knob values that
				// occurs in a valid combination is compiled at least once.
				// The tma epilogue's builds are skipped where the NVRTC or the
				// arch lacks the bulk copy, so the simt and the tma builds
				// each get their own cover: the pairs of the other knobs are
				// compiled everywhere.
				n := len(vs)
				simt, tma := splitTMA(vs)
				vs = pairwise(v, simt)
				if len(tma) > 0 {
					vs = append(vs, pairwise(tma[0], tma)...)
				}
				t.Logf("%s fused: %d of %d combinations cover every pair of values", p.Name, len(vs), n)
			}
			if v.Base == "baseline" {
				// The seeds' space (swap_ab=false, epilogue=simt) is compiled
				// in full, as before the swap and the tma epilogue were
				// declared; each of those two new values gets a pairwise
				// cover (every pair of define values that occurs with it),
				// so the space CI compiles grows by a few dozen modules, not
				// fourfold. The device test compiles every combination.
				n := len(vs)
				var seeds, swapped, tma []kernels.Variant
				for _, kv := range vs {
					switch {
					case kv.Knobs.Epilogue == "tma":
						tma = append(tma, kv)
					case kv.Knobs.SwapAB:
						swapped = append(swapped, kv)
					default:
						seeds = append(seeds, kv)
					}
				}
				vs = seeds
				if len(swapped) > 0 {
					vs = append(vs, pairwise(swapped[0], swapped)...)
				}
				if len(tma) > 0 {
					vs = append(vs, pairwise(tma[0], tma)...)
				}
				t.Logf("%s baseline: %d of %d combinations (all with swap_ab=false and epilogue=simt, pairwise covers of the rest)", p.Name, len(vs), n)
			}
			if v.Base == "wgmma" {
				// Every combination at the default token pass and tail width
				// (both decodes: the space compiled in full before tokens and
				// fit with the split were declared), and a pairwise cover of
				// the define values of the rest: those two knobs each change
				// one corner of the kernel, and the full product (702
				// combinations, 444 modules) took this step 890 s on CI's two
				// cores (2026-11-26). prefetch=next, which changes only where a
				// consumer's weight ring starts, prefetch=producer, the dual
				// GEMM's epilogue=split and staging=stmatrix are in the cover,
				// not the core.
				n := len(vs)
				var core, rest []kernels.Variant
				for _, kv := range vs {
					k, d := kv.Knobs, v.Knobs
					if k.SameValues(d, kernels.WgmmaPairwiseKnobs...) {
						core = append(core, kv)
					} else {
						rest = append(rest, kv)
					}
				}
				vs = core
				if len(rest) > 0 {
					vs = append(vs, pairwise(rest[0], rest)...)
				}
				t.Logf("%s wgmma: %d of %d combinations (all at the defaults of the WgmmaPairwiseKnobs: tokens, tail width, prefetch, epilogue, staging, token copy and token wait; a pairwise cover of the rest)", p.Name, len(vs), n)
			}
			for _, kv := range vs {
				s.add(kv, archs)
			}
		}
	}
	compileJobs(t, ver, s)
}

// compileJobs compiles s's modules on every CPU and checks each: it builds,
// and the defaults do not spill beyond their limits.
func compileJobs(t *testing.T, ver string, s *jobSet) {
	t.Helper()
	for k := range s.skipped {
		t.Logf("skipped %s: epilogue=tma is built only for sm_90+ with NVRTC 12.0+ (this is NVRTC %s)", k, ver)
	}
	jobs := s.jobs
	t.Logf("NVRTC %s: %d modules to compile on %d CPUs", ver, len(jobs), runtime.NumCPU())

	type result struct {
		job                compileJob
		regs, spill, stack int
		err                error
	}
	results := make([]result, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			src, err := j.v.Source()
			var hdrs map[string]string
			if err == nil {
				hdrs, err = j.v.Headers()
			}
			if err == nil {
				var c *gpu.Compiled
				defs := j.v.Defines()
				for k, v := range j.extra {
					defs[k] = v
				}
				flags := []string{"--ptxas-options=-v"}
				if strings.HasPrefix(j.arch, "compute_") {
					flags = nil // PTX only: no ptxas
				}
				c, err = gpu.Compile(j.v.SourceFile, src, gpu.CompileOptions{Arch: j.arch, Defines: defs, Flags: flags, Headers: hdrs})
				if err == nil {
					results[i] = result{job: j}
					results[i].regs, results[i].spill, results[i].stack = ptxasFigures(c.Log)
					return
				}
			}
			results[i] = result{job: j, err: err}
		}()
	}
	wg.Wait()
	for _, r := range results {
		name := r.job.v.Problem + " " + r.job.v.Name + " " + r.job.arch
		if r.err != nil {
			var ce *gpu.CompileError
			if errors.As(r.err, &ce) {
				t.Errorf("%s: %v", name, ce)
			} else {
				t.Errorf("%s: %v", name, r.err)
			}
			continue
		}
		t.Logf("%-60s regs %3d  spill %5d B  stack %5d B", name, r.regs, r.spill, r.stack)
		// The defaults are what the pitches compare against: they must not
		// spill. The fused dual default is held to 168 registers by its 3
		// blocks per SM (the measured fastest); ptxas spills 4 bytes of it
		// for sm_80 here and for sm_90a with NVRTC 13.0 (docs/VARIANTS.md),
		// so the fused defaults may spill at most 16 bytes.
		limit := -1
		switch {
		case r.job.v.Name == "baseline" || r.job.v.Reference:
			limit = 0
		case r.job.v.Name == "fused":
			limit = 16
		}
		if limit >= 0 && r.spill > limit {
			t.Errorf("%s spills %d bytes: the default tile must fit the register file", name, r.spill)
		}
	}
}

// pairwise picks, greedily, variants from vs until every pair of
// (define, value) settings that occurs in vs occurs in a picked one; the
// family's default (def) always comes first. Host-only knobs (grid, launch)
// are not defines, so they do not count.
func pairwise(def kernels.Variant, vs []kernels.Variant) []kernels.Variant {
	return coverOf(def, vs, func(v kernels.Variant) []string {
		d := v.Defines()
		keys := sortedKeys(d)
		var ps []string
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				ps = append(ps, keys[i]+"="+d[keys[i]]+"&"+keys[j]+"="+d[keys[j]])
			}
		}
		return ps
	})
}

// eachValue picks, greedily, variants from vs until every (define, value)
// setting that occurs in vs occurs in a picked one, def first: the smallest
// cover that still builds every knob value once.
func eachValue(def kernels.Variant, vs []kernels.Variant) []kernels.Variant {
	return coverOf(def, vs, func(v kernels.Variant) []string {
		d := v.Defines()
		var out []string
		for _, k := range sortedKeys(d) {
			out = append(out, k+"="+d[k])
		}
		return out
	})
}

func sortedKeys(d map[string]string) []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// coverOf picks def, then greedily the variant of vs that adds the most
// features not yet covered, until every feature of vs is covered.
func coverOf(def kernels.Variant, vs []kernels.Variant, features func(kernels.Variant) []string) []kernels.Variant {
	need := map[string]bool{}
	for _, v := range vs {
		for _, p := range features(v) {
			need[p] = true
		}
	}
	picked := []kernels.Variant{def}
	for _, p := range features(def) {
		delete(need, p)
	}
	for len(need) > 0 {
		best, gain := -1, 0
		for i, v := range vs {
			g := 0
			for _, p := range features(v) {
				if need[p] {
					g++
				}
			}
			if g > gain {
				best, gain = i, g
			}
		}
		if best < 0 {
			break
		}
		for _, p := range features(vs[best]) {
			delete(need, p)
		}
		picked = append(picked, vs[best])
	}
	return picked
}
