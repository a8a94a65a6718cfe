package paired

import (
	"math/rand/v2"
	"slices"
)

// Median of xs; NaN-free input assumed, empty input gives 0.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
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

// MedianCI is the bootstrap 95% interval of the median of xs.
func MedianCI(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, resamples)
	buf := make([]float64, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		meds[i] = Median(buf)
	}
	slices.Sort(meds)
	return meds[int(0.025*resamples)], meds[int(0.975*resamples)-1]
}
