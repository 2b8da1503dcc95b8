package bench

import (
	"math"
	"runtime"
	"sync"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
)

// compareParallel is nvfp4.Compare over chunks on every core: the timing
// guard checks millions of outputs many times per shape (8 MB of fp16 on
// the largest benchmark shapes), and one core made that the guard's main
// cost. The chunks' figures merge exactly: counts add, maxima take the
// max, and the relative L2 error is rebuilt from each chunk's squared sums.
func compareParallel(got []uint16, ref []float64, atol, rtol float64) nvfp4.Check {
	const chunk = 1 << 20
	if len(got) != len(ref) || len(got) <= chunk {
		return nvfp4.Compare(got, ref, atol, rtol)
	}
	n := (len(got) + chunk - 1) / chunk
	parts := make([]nvfp4.Check, n)
	refSq := make([]float64, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lo, hi := i*chunk, min((i+1)*chunk, len(got))
			parts[i] = nvfp4.Compare(got[lo:hi], ref[lo:hi], atol, rtol)
			// As nvfp4.Compare: only elements where both are finite count.
			for j, r := range ref[lo:hi] {
				g := nvfp4.F16ToFloat64(got[lo+j])
				if !math.IsNaN(r) && !math.IsInf(r, 0) && !math.IsNaN(g) && !math.IsInf(g, 0) {
					refSq[i] += r * r
				}
			}
		}()
	}
	wg.Wait()
	c := nvfp4.Check{FirstBad: -1}
	var errSq, rs float64
	for i, p := range parts {
		c.Elements += p.Elements
		c.Mismatches += p.Mismatches
		c.NaNs += p.NaNs
		c.MaxAbsErr = max(c.MaxAbsErr, p.MaxAbsErr)
		c.MaxRelErr = max(c.MaxRelErr, p.MaxRelErr)
		if c.FirstBad < 0 && p.FirstBad >= 0 {
			c.FirstBad = i*chunk + p.FirstBad
		}
		if refSq[i] > 0 {
			errSq += p.RelL2Err * p.RelL2Err * refSq[i]
		} else {
			errSq += p.RelL2Err * p.RelL2Err
		}
		rs += refSq[i]
	}
	if rs > 0 {
		c.RelL2Err = math.Sqrt(errSq / rs)
	} else {
		c.RelL2Err = math.Sqrt(errSq)
	}
	c.Pass = c.Mismatches == 0
	return c
}
