package devnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrMissing is returned when a peer's binary is not installed. The message
// names the command that installs it.
var ErrMissing = errors.New("peer binary not installed")

// FreePort returns a loopback TCP port that was free a moment ago. The bind
// check is real: the port is bound, then released for the peer to take.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bind a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// LookBinary finds name on PATH or at one of the extra paths.
func LookBinary(name string, extra ...string) (string, error) {
	for _, p := range extra {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrMissing, name)
	}
	return p, nil
}

// Process is a peer process started by devnet.
type Process struct {
	cmd     *exec.Cmd
	name    string
	logPath string
	once    sync.Once
	done    chan struct{}
	err     error
}

// StartProcess starts bin with args, its output appended to logPath.
func StartProcess(name, logPath, bin string, args ...string) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Its own process group, so a Ctrl-C at the terminal reaches the parent
	// first and the parent stops peers in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{cmd: cmd, name: name, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM, waits up to timeout, then kills. Calling it twice is
// harmless.
func (p *Process) Stop(timeout time.Duration) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(timeout):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// Kill ends the process at once (SIGKILL), as a crash would.
func (p *Process) Kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
}

// LogTail returns the last lines of the process log, for error messages.
func (p *Process) LogTail() string { return tail(p.logPath, 20) }

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitUntil calls ready every 50 ms until it returns nil, the process exits,
// or ctx ends.
func WaitUntil(ctx context.Context, p *Process, what string, ready func(context.Context) error) error {
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited before it was ready: %v\n%s", what, last, p.LogTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (%w)", what, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
