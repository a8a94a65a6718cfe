package main

import (
	"math/rand/v2"
	"slices"
)

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// resamples is the bootstrap size; the seed is fixed so a report is reproducible.
const resamples = 2000

func resample(rng *rand.Rand, xs, buf []float64) []float64 {
	buf = buf[:0]
	for range xs {
		buf = append(buf, xs[rng.IntN(len(xs))])
	}
	return buf
}

// ciOf returns the 2.5th and 97.5th percentiles of stat over bootstrap
// resamples of xs and ys (ys may be nil).
func ciOf(xs, ys []float64, stat func(x, y []float64) float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, resamples)
	bx, by := make([]float64, 0, len(xs)), make([]float64, 0, len(ys))
	for i := range vals {
		bx = resample(rng, xs, bx)
		if ys != nil {
			by = resample(rng, ys, by)
		}
		vals[i] = stat(bx, by)
	}
	slices.Sort(vals)
	return vals[int(0.025*resamples)], vals[int(0.975*resamples)-1]
}

// medianCI is the bootstrap 95% interval of the median.
func medianCI(xs []float64) (lo, hi float64) {
	return ciOf(xs, nil, func(x, _ []float64) float64 { return median(x) })
}

// ratioCI is the bootstrap 95% interval of median(xs)/median(ys).
func ratioCI(xs, ys []float64) (lo, hi float64) {
	return ciOf(xs, ys, func(x, y []float64) float64 { return median(x) / median(y) })
}
