package main

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The access logs' paths: access-log-path for both logs, and
// http-access-log-path and stream-access-log-path each over it for its
// own, as nginx.tmpl writes access_log {{ or $cfg.HTTPAccessLogPath
// $cfg.AccessLogPath }} (and the stream's likewise).

// The paths a key's value is read as, besides a file's.
const (
	// stdoutPath is the process's stdout (the run's, where the access
	// log goes by default): ingress-nginx's image links its default,
	// /var/log/nginx/access.log, there.
	stdoutPath = "/dev/stdout"
	// stderrPath is the container's stderr, where the image links
	// /var/log/nginx/error.log.
	stderrPath = "/dev/stderr"
)

// parseLogPath reads an access log path key: "" unset (the next in
// nginx.tmpl's "or"), stdoutPath, stderrPath, or an absolute file path,
// which must open for appending as nginx -t opens it.
func parseLogPath(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v == "/var/log/nginx/access.log" || v == stdoutPath:
		return stdoutPath, nil
	case v == "/var/log/nginx/error.log" || v == stderrPath:
		return stderrPath, nil
	case strings.HasPrefix(v, "syslog:"):
		return "", errors.New("not implemented: syslog; the access log goes to stdout, stderr or a file")
	case !filepath.IsAbs(v):
		return "", errors.New("not an absolute path")
	}
	f, err := openLogFile(v)
	if err != nil {
		return "", err
	}
	return v, f.close()
}

// The path keys' parsers.
func init() {
	accessLogConfigMapKeys["access-log-path"] = func(c *config, v string) (err error) {
		c.logKeys.path, err = parseLogPath(v)
		return err
	}
	accessLogConfigMapKeys["http-access-log-path"] = func(c *config, v string) (err error) {
		c.logKeys.httpPath, err = parseLogPath(v)
		return err
	}
	accessLogConfigMapKeys["stream-access-log-path"] = func(c *config, v string) (err error) {
		c.logKeys.streamPath, err = parseLogPath(v)
		return err
	}
}

// httpLogPath and streamLogPath are where each log goes: a parsed path,
// "" for stdout.
func (k accessLogKeys) httpLogPath() string   { return cmp.Or(k.httpPath, k.path) }
func (k accessLogKeys) streamLogPath() string { return cmp.Or(k.streamPath, k.path) }

// logWriter is what path (a parsed one) names: out (stdout) for "" and
// stdoutPath, stderr, or the file opened for appending; file is the one
// opened, nil for stdout and stderr.
func logWriter(path string, out io.Writer) (w io.Writer, file *logFile, err error) {
	switch path {
	case "", stdoutPath:
		return out, nil, nil
	case stderrPath:
		return os.Stderr, nil, nil
	}
	f, err := openLogFile(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// logFile is an access log file, appended to and created as nginx's
// access_log creates it. reopen opens its path anew, as nginx reopens
// its logs on SIGUSR1, so that rotation tools that move the file away
// (logrotate without copytruncate) are followed.
type logFile struct {
	path string
	mu   sync.RWMutex // write lock: f changes
	f    *os.File     // nil once closed
}

func openLogFile(path string) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &logFile{path: path, f: f}, nil
}

// Write writes one line: each log writes a whole line at once, and
// O_APPEND keeps two logs' lines to the same file apart.
func (l *logFile) Write(b []byte) (int, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	return l.f.Write(b)
}

// reopen opens the path again and swaps the file in; when that fails,
// the old file stays, as nginx keeps it.
func (l *logFile) reopen() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	if old == nil { // closed meanwhile
		return l.close()
	}
	return old.Close()
}

func (l *logFile) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// logFiles are the files a liveAccessLog's logs write to, by path.
type logFiles map[string]*logFile

// writer is what path names, reusing the file of was when it has it and
// recording the files used in l; out (stdout) when a file cannot be
// opened (it opened as the key was read).
func (l logFiles) writer(path string, out io.Writer, was logFiles) io.Writer {
	if f := cmp.Or(l[path], was[path]); f != nil {
		l[path] = f
		return f
	}
	w, f, err := logWriter(path, out)
	if err != nil {
		return out
	}
	if f != nil {
		l[path] = f
	}
	return w
}

// reopenOn reopens l's files on each signal from ch until ch closes.
func (l *liveAccessLog) reopenOn(ch <-chan os.Signal, log *slog.Logger) {
	for range ch {
		l.mu.Lock()
		for _, p := range slices.Sorted(maps.Keys(l.files)) {
			if err := l.files[p].reopen(); err != nil {
				log.Error("cannot reopen the access log; it goes on to the file open before", "path", p, "err", err)
			}
		}
		l.mu.Unlock()
	}
}

// close closes l's files: its logs write nothing more to them.
func (l *liveAccessLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		_ = f.close()
	}
	l.files = nil
}
