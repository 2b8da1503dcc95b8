package nvfp4

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking of the reference GEMM. Each worker owns refTileN rows of B (output
// columns) at a time and walks K in chunks of refTileK so that the B chunk
// (refTileN * refTileK float64 = 128 KiB) stays in cache while every row of A
// streams past it. Accumulators live in C between K chunks; since each output
// still adds its products in k order, the result is bit-identical to a naive
// serial loop.
const (
	refTileN = 64
	refTileK = 256
)

// GemmRef returns C = A @ B^T in float64, row-major a.Rows x b.Rows:
// C[i*N+j] = sum over k, in k order, of a(i,k)*b(j,k).
//
// Why float64 is the reference and not an approximation of one: every decoded
// element is an integer multiple of 2^-10 (e2m1 steps of 0.5 times e4m3 steps
// of 2^-9), so every product is a multiple of 2^-20 and is exact in float64,
// and every partial sum is exact while it stays below 2^33 in magnitude. That
// holds by a wide margin for the generator's inputs (|C| of order 10-100), so
// C here is the exact product; a kernel's only legitimate errors are its fp32
// accumulation and the final fp16 rounding.
//
// Work is spread over runtime.GOMAXPROCS goroutines by tiles of B rows; each
// row of A and of B is decoded once. Operands of different K are a
// programmer error and panic.
func GemmRef(a, b *Operand) []float64 {
	if a.K != b.K {
		panic(fmt.Sprintf("nvfp4: GemmRef: A has K=%d but B has K=%d", a.K, b.K))
	}
	return gemmDecodedA(a.Decode(), a.Rows, b)
}

// DualGemmRef returns silu(A @ B1^T) * (A @ B2^T) in float64, row-major
// a.Rows x b1.Rows, with silu(x) = x / (1 + exp(-x)). The two GEMMs are exact
// (see GemmRef); silu and the product are correctly rounded float64
// operations up to exp's error, far below fp16's resolution.
func DualGemmRef(a, b1, b2 *Operand) []float64 {
	if a.K != b1.K || a.K != b2.K {
		panic(fmt.Sprintf("nvfp4: DualGemmRef: K differs: A %d, B1 %d, B2 %d", a.K, b1.K, b2.K))
	}
	if b1.Rows != b2.Rows {
		panic(fmt.Sprintf("nvfp4: DualGemmRef: B1 has %d rows but B2 has %d", b1.Rows, b2.Rows))
	}
	ad := a.Decode()
	c1 := gemmDecodedA(ad, a.Rows, b1)
	c2 := gemmDecodedA(ad, a.Rows, b2)
	for i := range c1 {
		c1[i] = Silu(c1[i]) * c2[i]
	}
	return c1
}

// Silu is x * sigmoid(x), written as x / (1 + exp(-x)); for very negative x,
// exp overflows to +Inf and the result is -0, the correct limit.
func Silu(x float64) float64 {
	return x / (1 + math.Exp(-x))
}

func gemmDecodedA(ad []float64, m int, b *Operand) []float64 {
	n, k := b.Rows, b.K
	c := make([]float64, m*n)
	tiles := (n + refTileN - 1) / refTileN
	workers := min(runtime.GOMAXPROCS(0), tiles)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bd := make([]float64, refTileN*k)
			for {
				t := int(next.Add(1) - 1)
				if t >= tiles {
					return
				}
				j0 := t * refTileN
				j1 := min(j0+refTileN, n)
				for j := j0; j < j1; j++ {
					b.DecodeRow(j, bd[(j-j0)*k:(j-j0+1)*k])
				}
				gemmTile(c, ad, bd, m, n, k, j0, j1)
			}
		}()
	}
	wg.Wait()
	return c
}

// gemmTile accumulates C[:, j0:j1] from decoded A (m x k) and the decoded B
// rows j0..j1-1 held in bd (row j at bd[(j-j0)*k:]).
func gemmTile(c, ad, bd []float64, m, n, k, j0, j1 int) {
	for k0 := 0; k0 < k; k0 += refTileK {
		k1 := min(k0+refTileK, k)
		i := 0
		for ; i+2 <= m; i += 2 {
			a0 := ad[i*k+k0 : i*k+k1]
			a1 := ad[(i+1)*k+k0 : (i+1)*k+k1]
			j := j0
			for ; j+4 <= j1; j += 4 {
				b0 := bd[(j-j0)*k+k0 : (j-j0)*k+k1]
				b1 := bd[(j-j0+1)*k+k0 : (j-j0+1)*k+k1]
				b2 := bd[(j-j0+2)*k+k0 : (j-j0+2)*k+k1]
				b3 := bd[(j-j0+3)*k+k0 : (j-j0+3)*k+k1]
				r0 := c[i*n+j : i*n+j+4]
				r1 := c[(i+1)*n+j : (i+1)*n+j+4]
				micro2x4(a0, a1, b0, b1, b2, b3, r0, r1)
			}
			for ; j < j1; j++ {
				brow := bd[(j-j0)*k+k0 : (j-j0)*k+k1]
				c[i*n+j] = dotAcc(c[i*n+j], a0, brow)
				c[(i+1)*n+j] = dotAcc(c[(i+1)*n+j], a1, brow)
			}
		}
		for ; i < m; i++ {
			arow := ad[i*k+k0 : i*k+k1]
			for j := j0; j < j1; j++ {
				c[i*n+j] = dotAcc(c[i*n+j], arow, bd[(j-j0)*k+k0:(j-j0)*k+k1])
			}
		}
	}
}

func dotAcc(acc float64, a, b []float64) float64 {
	b = b[:len(a)]
	for x, av := range a {
		acc += float64(av * b[x])
	}
	return acc
}

// micro2x4 adds two rows of A against four rows of B into r0[0:4], r1[0:4],
// each output in k order. The explicit float64 conversions forbid fusing the
// multiply and add into an FMA (Go spec, "Arithmetic operators"), so results
// equal a naive loop on every architecture (the products are exact anyway).
func micro2x4(a0, a1, b0, b1, b2, b3, r0, r1 []float64) {
	n := len(a0)
	a1, b0, b1, b2, b3 = a1[:n], b0[:n], b1[:n], b2[:n], b3[:n]
	r0, r1 = r0[:4], r1[:4]
	c00, c01, c02, c03 := r0[0], r0[1], r0[2], r0[3]
	c10, c11, c12, c13 := r1[0], r1[1], r1[2], r1[3]
	for x := range n {
		x0, x1 := a0[x], a1[x]
		y0, y1, y2, y3 := b0[x], b1[x], b2[x], b3[x]
		c00 += float64(x0 * y0)
		c01 += float64(x0 * y1)
		c02 += float64(x0 * y2)
		c03 += float64(x0 * y3)
		c10 += float64(x1 * y0)
		c11 += float64(x1 * y1)
		c12 += float64(x1 * y2)
		c13 += float64(x1 * y3)
	}
	r0[0], r0[1], r0[2], r0[3] = c00, c01, c02, c03
	r1[0], r1[1], r1[2], r1[3] = c10, c11, c12, c13
}
