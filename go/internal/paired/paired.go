// Package paired samples several arms (client/server pairs on one
// workload) in turns in one process: a round is one short sample of each,
// and a factor is the median over rounds of an arm's sample over the
// reference's sample of the same round. A shared machine's speed changes
// from one 20 ms to the next; two samples taken side by side see the same
// speed, two benchmarks run one after the other do not. It is the Go side of
// crates/measure/src/paired.rs and follows the same order rule.
package paired

import (
	"fmt"
	"runtime"
	"time"
)

// Runner does n operations and returns the time they took.
type Runner interface {
	Run(n int) (time.Duration, error)
}

// CPUCounter is a Runner that also counts the process's CPU time its
// operations took (every thread's, so both peers'), leaving out the set-up
// its Run does between them: the total so far.
type CPUCounter interface {
	TimedCPU() time.Duration
}

// Sample is one arm's figures from one round, per operation.
type Sample struct {
	Round   int
	NsPerOp float64
	// CPUNsPerOp is the process's CPU time per operation, for a CPUCounter
	// (0 otherwise).
	CPUNsPerOp  float64
	BytesPerOp  float64
	AllocsPerOp float64
	// C allocations per operation, where Options.CAllocations counts them.
	CBytesPerOp, CAllocsPerOp float64
}

// Options say how long and how often each arm is sampled.
type Options struct {
	Rounds int
	// Target is the time one sample aims at; an arm's operations per sample
	// are fixed after its warm-up so that its samples are alike.
	Target time.Duration
	// Warmup is spent on each arm before the first round.
	Warmup time.Duration
	// Progress, if set, is called after every sample with the samples taken
	// and the total planned.
	Progress func(done, total int)
	// CAllocations, if set, reads the process's C allocation counters (calls
	// and bytes so far, ok false when they are off): each sample then also
	// takes the C allocations its operations made.
	CAllocations func() (calls, bytes uint64, ok bool)
}

// Order is the position of each arm in round `round`: the arms rotate by one
// place every other round and run backwards in odd rounds, so every arm
// takes every position, as often first as last.
func Order(arms, round int) []int {
	if arms == 0 {
		return nil
	}
	shift := (round / 2) % arms
	o := make([]int, arms)
	for i := range o {
		o[i] = (i + shift) % arms
	}
	if round%2 == 1 {
		for i, j := 0, len(o)-1; i < j; i, j = i+1, j-1 {
			o[i], o[j] = o[j], o[i]
		}
	}
	return o
}

// Run warms each arm up, then samples them in turns for o.Rounds rounds. An
// arm that fails gets its error in errs and is left out of later rounds;
// the others go on.
func Run(arms []Runner, o Options) (samples [][]Sample, errs []error) {
	samples = make([][]Sample, len(arms))
	errs = make([]error, len(arms))
	ops := make([]int, len(arms))
	for i, a := range arms {
		ops[i], errs[i] = calibrate(a, o.Target, o.Warmup)
	}
	total, done := o.Rounds*len(arms), 0
	for round := range o.Rounds {
		for _, i := range Order(len(arms), round) {
			done++
			if errs[i] != nil {
				continue
			}
			s, err := sample(arms[i], ops[i], o.CAllocations)
			if err != nil {
				errs[i] = fmt.Errorf("round %d: %w", round, err)
				continue
			}
			s.Round = round
			samples[i] = append(samples[i], s)
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
	}
	return samples, errs
}

// calibrate runs an arm for the warm-up, doubling its operations, and
// returns how many make one sample of about the target time.
func calibrate(a Runner, target, warmup time.Duration) (int, error) {
	n, spent, ran := 1, time.Duration(0), 0
	for deadline := time.Now().Add(warmup); ; n *= 2 {
		d, err := a.Run(n)
		if err != nil {
			return 0, fmt.Errorf("warm-up: %w", err)
		}
		spent, ran = spent+d, ran+n
		if !time.Now().Before(deadline) {
			break
		}
	}
	perOp := float64(spent) / float64(ran)
	return max(1, int(float64(target)/max(perOp, 1))), nil
}

// sample runs n operations and takes their time and allocations. The
// allocation figures count every goroutine (as testing.B does): the server
// side of a pair is part of what it costs.
func sample(a Runner, n int, cAllocations func() (uint64, uint64, bool)) (Sample, error) {
	var before, after runtime.MemStats
	var cCalls, cBytes uint64
	if cAllocations != nil {
		cCalls, cBytes, _ = cAllocations()
	}
	cpu, counted := a.(CPUCounter)
	var cpuBefore time.Duration
	if counted {
		cpuBefore = cpu.TimedCPU()
	}
	runtime.ReadMemStats(&before)
	d, err := a.Run(n)
	if err != nil {
		return Sample{}, err
	}
	runtime.ReadMemStats(&after)
	if d <= 0 {
		return Sample{}, fmt.Errorf("%d operations took %v", n, d)
	}
	s := Sample{
		NsPerOp:     float64(d.Nanoseconds()) / float64(n),
		BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
	}
	if counted {
		s.CPUNsPerOp = float64((cpu.TimedCPU() - cpuBefore).Nanoseconds()) / float64(n)
	}
	if cAllocations != nil {
		calls, bytes, _ := cAllocations()
		s.CAllocsPerOp = float64(calls-cCalls) / float64(n)
		s.CBytesPerOp = float64(bytes-cBytes) / float64(n)
	}
	return s, nil
}

// Ratios is each of arm's ns/op over the reference's in the same round, for
// the rounds both have.
func Ratios(arm, reference []Sample) []float64 {
	return RatiosOf(arm, reference, func(s Sample) float64 { return s.NsPerOp })
}

// RatiosOf is Ratios of the figure get reads.
func RatiosOf(arm, reference []Sample, get func(Sample) float64) []float64 {
	byRound := make(map[int]float64, len(reference))
	for _, s := range reference {
		byRound[s.Round] = get(s)
	}
	var out []float64
	for _, s := range arm {
		if r, ok := byRound[s.Round]; ok && r > 0 {
			out = append(out, get(s)/r)
		}
	}
	return out
}
