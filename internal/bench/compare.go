package bench

import (
	"math"
	"runtime"
	"sync"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
)

// f16Table maps every fp16 bit pattern to its float64 value: the timing
// guard compares millions of outputs many times per shape, and decoding
// each with nvfp4.F16ToFloat64 made that check cost 30 ms per million
// elements on one core.
var f16Table = sync.OnceValue(func() []float64 {
	t := make([]float64, 1<<16)
	for i := range t {
		t[i] = nvfp4.F16ToFloat64(uint16(i))
	}
	return t
})

// chunkFigures are one chunk's comparison figures, merged exactly.
type chunkFigures struct {
	mismatches, nans, firstBad int
	maxAbs, maxRel             float64
	errSq, refSq               float64
}

// compareChunk is nvfp4.Compare's element rule over got[lo:hi].
func compareChunk(tab []float64, got []uint16, ref []float64, lo, hi int, atol, rtol float64) chunkFigures {
	f := chunkFigures{firstBad: -1}
	fail := func(i int) {
		f.mismatches++
		if f.firstBad < 0 {
			f.firstBad = i
		}
	}
	for i := lo; i < hi; i++ {
		g, r := tab[got[i]], ref[i]
		if math.IsNaN(g) || math.IsInf(g, 0) {
			f.nans++
			fail(i)
			continue
		}
		if math.IsNaN(r) || math.IsInf(r, 0) {
			fail(i)
			continue
		}
		d := math.Abs(g - r)
		f.maxAbs = max(f.maxAbs, d)
		if r != 0 {
			f.maxRel = max(f.maxRel, d/math.Abs(r))
		}
		f.errSq += d * d
		f.refSq += r * r
		if !(d <= atol+rtol*math.Abs(r)) {
			fail(i)
		}
	}
	return f
}

// compareParallel gives nvfp4.Compare's result, computed in chunks on
// every core with a table decode.
func compareParallel(got []uint16, ref []float64, atol, rtol float64) nvfp4.Check {
	if len(got) != len(ref) {
		return nvfp4.Compare(got, ref, atol, rtol)
	}
	const chunk = 1 << 18
	tab := f16Table()
	n := max(1, (len(got)+chunk-1)/chunk)
	parts := make([]chunkFigures, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			parts[i] = compareChunk(tab, got, ref, i*chunk, min((i+1)*chunk, len(got)), atol, rtol)
		}()
	}
	wg.Wait()
	c := nvfp4.Check{Elements: len(ref), FirstBad: -1}
	var errSq, refSq float64
	for _, p := range parts {
		c.Mismatches += p.mismatches
		c.NaNs += p.nans
		c.MaxAbsErr = max(c.MaxAbsErr, p.maxAbs)
		c.MaxRelErr = max(c.MaxRelErr, p.maxRel)
		if c.FirstBad < 0 {
			c.FirstBad = p.firstBad
		}
		errSq += p.errSq
		refSq += p.refSq
	}
	if refSq > 0 {
		c.RelL2Err = math.Sqrt(errSq / refSq)
	} else {
		c.RelL2Err = math.Sqrt(errSq)
	}
	c.Pass = c.Mismatches == 0
	return c
}
