package kubetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process may take to exit after SIGTERM before it
// is killed; its data is thrown away, so nothing is lost by killing it.
const stopGrace = 5 * time.Second

// process is a child whose combined output goes to a log file in the
// server's directory.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited
	waitErr error         // valid after done is closed
}

func launch(name, dir, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(os.Environ())
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// childEnv drops ETCD_* variables: etcd reads every flag from them too, and
// one left in the caller's environment would silently change the server.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD_") {
			out = append(out, kv)
		}
	}
	return out
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitErr is the wait result; call it only once exited reports true.
func (p *process) exitErr() error {
	if p.waitErr == nil {
		return errors.New("exit status 0")
	}
	return p.waitErr
}

// stop asks the process to exit, kills it after stopGrace, and waits.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	<-p.done
	return nil
}

func (p *process) logContains(s string) bool {
	data, err := os.ReadFile(p.logPath)
	return err == nil && bytes.Contains(data, []byte(s))
}

// tail returns the last n lines of the log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)\n", p.logPath, err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}
