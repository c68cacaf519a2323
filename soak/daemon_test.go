package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
)

// logBuf keeps a process's log.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// tail returns the last n lines of the log.
func (l *logBuf) tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// proc is one run of the daemon.
type proc struct {
	cmd    *exec.Cmd
	log    *logBuf
	done   chan struct{} // closed when the process has exited
	err    error         // its exit error, once done
	grpc   string
	tcp    string
	conn   *grpc.ClientConn
	client pb.StreamdClient
}

var (
	servingRE  = regexp.MustCompile(`msg="streamd serving" grpc=(\S+) tcp=(\S+)`)
	restoredRE = regexp.MustCompile(`msg="restored checkpoint" seq=(\d+)`)
	emptyRE    = regexp.MustCompile(`msg="no checkpoint to restore; starting empty"`)
	genRE      = regexp.MustCompile(`msg="kafka generation started" .*partitions=(\d+)`)
)

// startProc starts the binary with args and waits until it serves, or
// exits, or ctx ends. It returns the process even on error, for its log;
// a process that did not serve is killed.
func startProc(ctx context.Context, bin string, args []string) (*proc, error) {
	p := &proc{log: &logBuf{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = p.log
	p.cmd.Stdout = p.log
	if err := p.cmd.Start(); err != nil {
		p.err = err
		close(p.done)
		return p, fmt.Errorf("start streamd: %w", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	m, err := p.waitLog(ctx, servingRE, 60*time.Second)
	if err != nil {
		p.kill()
		return p, err
	}
	p.grpc, p.tcp = m[1], m[2]
	p.conn, err = grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		p.kill()
		return p, fmt.Errorf("dial %s: %w", p.grpc, err)
	}
	p.client = pb.NewStreamdClient(p.conn)
	return p, nil
}

// errExited is returned by waitLog when the process exits first.
var errExited = errors.New("streamd exited")

// waitLog polls the log until a line matches re and returns its submatches.
func (p *proc) waitLog(ctx context.Context, re *regexp.Regexp, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(p.log.String()); m != nil {
			return m, nil
		}
		select {
		case <-p.done:
			if m := re.FindStringSubmatch(p.log.String()); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("waiting for %q: %w (%v)", re, errExited, p.err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no log line %q after %v", re, timeout)
		}
	}
}

// restoredSeq returns the checkpoint the daemon restored, 0 if it started
// empty, -1 if its log does not say.
func (p *proc) restoredSeq() int64 {
	log := p.log.String()
	if m := restoredRE.FindStringSubmatch(log); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	if emptyRE.MatchString(log) {
		return 0
	}
	return -1
}

// waitJoined waits until the daemon consumes all partitions partitions of
// the group in one generation.
func (p *proc) waitJoined(ctx context.Context, partitions int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range genRE.FindAllStringSubmatch(p.log.String(), -1) {
			if m[1] == strconv.Itoa(partitions) {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("waiting for the kafka group: %w (%v)", errExited, p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not consuming all %d kafka partitions after %v", partitions, timeout)
		}
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
	p.close()
}

// term sends SIGTERM and waits up to timeout for the exit; it reports
// whether the daemon exited, and its exit code.
func (p *proc) term(timeout time.Duration) (exited bool, code int) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		return false, -1
	}
	p.close()
	return true, p.cmd.ProcessState.ExitCode()
}

func (p *proc) close() {
	if p.conn != nil {
		p.conn.Close()
	}
}

// count returns the stream's count, 0 if it does not exist.
func count(ctx context.Context, c pb.StreamdClient, stream string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: stream})
	if status.Code(err) == codes.NotFound {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stats %s: %w", stream, err)
	}
	return int64(st.Count), nil
}
