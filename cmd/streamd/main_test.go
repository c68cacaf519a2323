package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binDir holds the daemon that builtStreamd builds for the tests that run
// it as a process; TestMain makes it and removes it.
var binDir string

// builtStreamd builds the daemon once per test run.
var builtStreamd = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "streamd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

// buildStreamd returns the path of the daemon's binary, built once for
// all the tests that need it.
func buildStreamd(t testing.TB) string {
	t.Helper()
	bin, err := builtStreamd()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
