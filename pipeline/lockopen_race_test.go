package pipeline

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"streamd/gpusort"
)

// lockOpenRaceEnv, set to 1, makes TestLockOpenShowsRaces run the racy
// accesses it checks the race detector reports.
const lockOpenRaceEnv = "STREAMD_TEST_LOCKOPEN_RACE"

// TestLockOpenShowsRaces checks that lockOpen orders no accept after
// another for the race detector: a write by one goroutine before it takes
// stripes of sendMu, and a read by another after it takes one, with
// nothing else between them, are reported as a race. It runs the accesses
// in a child process, since the race they make fails the test that makes
// it, and needs a build with the race detector.
func TestLockOpenShowsRaces(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs the race detector")
	}
	if os.Getenv(lockOpenRaceEnv) == "1" {
		lockOpenRace(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockOpenShowsRaces$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockOpenRaceEnv+"=1")
	out, err := cmd.CombinedOutput()
	if !bytes.Contains(out, []byte("WARNING: DATA RACE")) {
		t.Fatalf("the race detector saw no race across lockOpen (%v):\n%s", err, out)
	}
}

// lockOpenRace writes a variable in one goroutine, which then takes and
// gives back stripes as accepts do, and reads it in this one after it
// takes a stripe: on one processor, so that the stripe it takes is one the
// other goroutine gave back last.
func lockOpenRace(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	var x int
	go func() {
		x = 1
		for range 8 {
			open, err := p.lockOpen()
			if err != nil {
				panic(err)
			}
			open.RUnlock()
		}
	}()
	runtime.Gosched()
	open, err := p.lockOpen()
	if err != nil {
		t.Fatal(err)
	}
	open.RUnlock()
	t.Log(x)
}
