package paired

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestEveryArmTakesEveryPositionEquallyOften(t *testing.T) {
	const arms = 4
	first, last := make([]int, arms), make([]int, arms)
	for round := range 2 * arms * 3 {
		o := Order(arms, round)
		first[o[0]]++
		last[o[arms-1]]++
	}
	for i := range arms {
		if first[i] != first[0] || last[i] != last[0] || first[i] != last[i] {
			t.Fatalf("first %v, last %v", first, last)
		}
	}
}

// window is how long the modulated machine stays fast, then slow.
const window = 200 * time.Millisecond

// modulated costs `cost` µs an operation, twice that in every other window
// of time since epoch: a machine whose speed changes under the benchmark.
// It spins rather than sleeps, so its time is what it says.
type modulated struct {
	cost  float64
	epoch time.Time
}

func (m modulated) Run(n int) (time.Duration, error) {
	start := time.Now()
	for range n {
		per := time.Duration(m.cost * float64(time.Microsecond))
		if (time.Since(m.epoch)/window)%2 == 1 {
			per *= 2
		}
		for end := time.Now().Add(per); time.Now().Before(end); {
		}
	}
	return time.Since(start), nil
}

// The known ratio 1.5 between two workloads survives the modulation when
// they are sampled in turns, and does not when each is run in a block of
// its own.
func TestPairedRatiosHoldThroughAModulatedMachineAndBlocksDoNot(t *testing.T) {
	epoch := time.Now()
	a, b := modulated{100, epoch}, modulated{150, epoch}
	s, errs := Run([]Runner{a, b}, Options{Rounds: 60, Target: 5 * time.Millisecond, Warmup: 10 * time.Millisecond})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if f := Median(Ratios(s[1], s[0])); math.Abs(f/1.5-1) > 0.03 {
		t.Errorf("paired factor %.3f, want 1.5 within 3%%", f)
	}

	// One block after the other: A from the start of a fast window, B from
	// the end of it, so B runs mostly slow.
	since := time.Since(epoch)
	time.Sleep(2*window - since%(2*window))
	block := func(r Runner, n int) []float64 {
		var xs []float64
		for range n {
			d, _ := r.Run(100)
			xs = append(xs, float64(d)/100)
		}
		return xs
	}
	va := block(a, 15) // 15 samples of 10 ms: within the fast window
	vb := block(b, 8)  // starts 150 ms into it: 15 ms fast samples, then 30 ms slow ones
	if f := Median(vb) / Median(va); math.Abs(f/1.5-1) <= 0.03 {
		t.Errorf("block-sequential factor %.3f should miss 1.5 (A %v, B %v)", f, va, vb)
	}
}

type failing struct{}

func (failing) Run(int) (time.Duration, error) { return 0, errors.New("broken") }

type counting struct{}

func (counting) Run(n int) (time.Duration, error) { return time.Duration(n) * time.Microsecond, nil }

func TestAFailingArmLeavesTheOthersRunning(t *testing.T) {
	s, errs := Run([]Runner{counting{}, failing{}}, Options{Rounds: 5, Target: time.Millisecond})
	if len(s[0]) != 5 || errs[0] != nil {
		t.Errorf("the working arm got %d samples, error %v", len(s[0]), errs[0])
	}
	if errs[1] == nil || len(s[1]) != 0 {
		t.Errorf("the failing arm: %d samples, error %v", len(s[1]), errs[1])
	}
}

func TestRatiosPairSamplesOfTheSameRound(t *testing.T) {
	ref := []Sample{{Round: 0, NsPerOp: 10}, {Round: 1, NsPerOp: 20}}
	arm := []Sample{{Round: 1, NsPerOp: 30}, {Round: 2, NsPerOp: 5}}
	got := Ratios(arm, ref)
	if len(got) != 1 || got[0] != 1.5 {
		t.Errorf("ratios %v, want [1.5]", got)
	}
}

func TestMedianCIHoldsTheMedian(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	lo, hi := MedianCI(xs)
	if m := Median(xs); lo > m || hi < m || lo < 1 || hi > 9 {
		t.Errorf("median %v, interval %v-%v", m, lo, hi)
	}
}
