// Package kubetest runs a real etcd and kube-apiserver for end-to-end tests.
//
// Each Start launches a private pair on free loopback ports inside the
// test's temporary directory, so tests can run in parallel and leave nothing
// behind. The binaries come from .ci/kube-tools, which installs etcd and
// builds the pinned kube-apiserver into a cache directory:
//
//	set -a; eval "$(.ci/kube-tools)"; set +a
//	go test ./...
//
// Without the binaries the tests that call Start are skipped, except under
// CI=true, where a missing binary fails the test instead of hiding it.
package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// KubeVersion is the kube-apiserver release the harness expects; it names
// the binary in the tools cache and must match examples/kube-apiserver.
const KubeVersion = "v1.37.2"

// EtcdVersion is the etcd release .ci/kube-tools builds into the tools cache
// when no etcd is on PATH and Debian's package cannot be installed; it must
// match the go.etcd.io/etcd/server/v3 requirement of examples/kube-apiserver.
const EtcdVersion = "v3.7.0"

// Environment variables read by the harness.
const (
	EnvEtcd       = "RAMJET_ETCD"           // path of the etcd binary
	EnvAPIServer  = "RAMJET_KUBE_APISERVER" // path of the kube-apiserver binary
	EnvToolsCache = "RAMJET_TOOLS_CACHE"    // cache directory of .ci/kube-tools
)

const (
	// readyTimeout bounds the wait for /readyz; a cold start on two shared
	// cores takes a few seconds, so this only trips on a real failure.
	readyTimeout = 60 * time.Second
	// startAttempts covers the rare case of another process taking one of
	// the free ports between picking it and the server binding it.
	startAttempts = 3
	// logTailLines is how much of each log a failure prints.
	logTailLines = 60
)

// Server is a running etcd and kube-apiserver pair.
type Server struct {
	// Config is an admin configuration (group system:masters) for the
	// apiserver. Copy it with rest.CopyConfig before changing it.
	Config *rest.Config
	// URL is the apiserver's base URL, https://127.0.0.1:<port>.
	URL string
	// EtcdURL is etcd's client URL, http://127.0.0.1:<port>.
	EtcdURL string
	// Dir holds the data, certificates and the logs etcd.log and
	// kube-apiserver.log; it is removed when the test ends.
	Dir string

	etcd      *process
	apiserver *process

	// What StartAPIServer needs to launch kube-apiserver again.
	apiserverBin  string
	apiserverArgs []string
	token         string
	readyClient   *http.Client
	restarts      int
}

// Start launches etcd and kube-apiserver on free loopback ports in
// t.TempDir(), waits until /readyz is ok, and stops both (and removes their
// data) in t.Cleanup. It skips the test when a binary is missing, or fails
// it when CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	bins := requireBinaries(t)

	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		began := time.Now()
		s, err := start(bins, t.TempDir())
		if err == nil {
			t.Cleanup(func() {
				if t.Failed() {
					t.Log(s.logTails())
				}
				if err := s.stop(); err != nil {
					t.Errorf("kubetest: stopping: %v", err)
				}
			})
			t.Logf("kubetest: kube-apiserver at %s ready in %s", s.URL, time.Since(began).Round(time.Millisecond))
			return s
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
		t.Logf("kubetest: attempt %d: %v; retrying on new ports", attempt, err)
	}
	t.Fatalf("kubetest: %v", lastErr)
	return nil
}

// Client returns a clientset for the admin configuration.
func (s *Server) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatalf("kubetest: client for %s: %v", s.URL, err)
	}
	return c
}

// binaries are the executables Start runs.
type binaries struct {
	etcd      string
	apiserver string
}

// requireBinaries finds the binaries or ends the test: a setting that points
// nowhere always fails, a binary that is simply absent skips outside CI.
func requireBinaries(t testing.TB) binaries {
	t.Helper()
	bins, missing, err := locate(os.Getenv, exec.LookPath)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("kubetest: %s; run .ci/kube-tools, which installs etcd and builds kube-apiserver", strings.Join(missing, "; "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bins
}

// locate resolves the binaries from the environment, PATH and the tools
// cache. missing describes each binary that is not there; err reports an
// explicit setting whose file is not an executable.
func locate(getenv func(string) string, lookPath func(string) (string, error)) (bins binaries, missing []string, err error) {
	if p := getenv(EnvEtcd); p != "" {
		if err := checkExecutable(p); err != nil {
			return binaries{}, nil, fmt.Errorf("%s=%s: %w", EnvEtcd, p, err)
		}
		bins.etcd = p
	} else if p, err := lookPath("etcd"); err == nil {
		bins.etcd = p
	} else if p := cachedTool(getenv, "etcd-"+EtcdVersion); checkExecutable(p) == nil {
		bins.etcd = p
	} else {
		missing = append(missing, fmt.Sprintf("etcd is not on PATH, not at %s, and %s is unset", p, EnvEtcd))
	}

	if p := getenv(EnvAPIServer); p != "" {
		if err := checkExecutable(p); err != nil {
			return binaries{}, nil, fmt.Errorf("%s=%s: %w", EnvAPIServer, p, err)
		}
		bins.apiserver = p
	} else {
		p := cachedTool(getenv, "kube-apiserver-"+KubeVersion)
		if checkExecutable(p) == nil {
			bins.apiserver = p
		} else {
			missing = append(missing, fmt.Sprintf("kube-apiserver is not at %s and %s is unset", p, EnvAPIServer))
		}
	}
	return bins, missing, nil
}

// cachedTool is where .ci/kube-tools builds the binary name.
func cachedTool(getenv func(string) string, name string) string {
	dir := getenv(EnvToolsCache)
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".cache", "ramjet-tools")
	}
	return filepath.Join(dir, name)
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// errPortTaken marks a start that lost one of its ports to another process.
var errPortTaken = errors.New("port already in use")

// start runs one attempt in dir. On error nothing is left running.
func start(bins binaries, dir string) (s *Server, err error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	clientPort, peerPort, securePort := ports[0], ports[1], ports[2]

	creds, err := writeCredentials(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, err
	}

	apiURL := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(securePort))
	s = &Server{
		URL:     apiURL,
		EtcdURL: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort)),
		Dir:     dir,
		Config: &rest.Config{
			Host:            apiURL,
			BearerToken:     creds.token,
			TLSClientConfig: rest.TLSClientConfig{CAData: creds.caPEM},
			// Tests create objects in bursts; client-side throttling would
			// only slow them down.
			QPS:   100,
			Burst: 200,
		},
	}
	defer func() {
		if err != nil {
			tails := s.logTails()
			if stopErr := s.stop(); stopErr != nil {
				err = fmt.Errorf("%w (and stopping: %v)", err, stopErr)
			}
			if errors.Is(err, errPortTaken) {
				return
			}
			err = fmt.Errorf("%w\n%s", err, tails)
		}
	}()

	peerURL := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))
	s.etcd, err = launch("etcd", dir, bins.etcd,
		"--name=kubetest",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+s.EtcdURL,
		"--advertise-client-urls="+s.EtcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubetest="+peerURL,
		"--initial-cluster-state=new",
		"--logger=zap",
		"--log-outputs=stderr",
	)
	if err != nil {
		return s, err
	}
	deadline := time.Now().Add(readyTimeout)
	if err := waitReady(s.etcd, http.DefaultClient, s.EtcdURL+"/health", "", deadline); err != nil {
		return s, err
	}

	s.apiserverBin = bins.apiserver
	s.apiserverArgs = apiserverArgs(dir, s.EtcdURL, securePort, creds)
	s.token = creds.token
	s.apiserver, err = launch("kube-apiserver", dir, bins.apiserver, s.apiserverArgs...)
	if err != nil {
		return s, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(creds.caPEM)
	s.readyClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer s.readyClient.CloseIdleConnections()
	if err := waitReady(s.apiserver, s.readyClient, s.URL+"/readyz", creds.token, deadline); err != nil {
		return s, err
	}
	return s, nil
}

// StopAPIServer stops kube-apiserver and leaves etcd running, so that a
// test can see what its clients do while the API is away.
func (s *Server) StopAPIServer() error {
	return s.apiserver.stop()
}

// StartAPIServer launches kube-apiserver again, on the same port and with
// the same data, after StopAPIServer, and waits until /readyz is ok. Each
// run logs to a file of its own (kube-apiserver.N.log).
func (s *Server) StartAPIServer() error {
	if !s.apiserver.exited() {
		return errors.New("kube-apiserver is still running")
	}
	s.restarts++
	p, err := launch(fmt.Sprintf("kube-apiserver.%d", s.restarts), s.Dir, s.apiserverBin, s.apiserverArgs...)
	if err != nil {
		return err
	}
	s.apiserver = p
	defer s.readyClient.CloseIdleConnections()
	return waitReady(p, s.readyClient, s.URL+"/readyz", s.token, time.Now().Add(readyTimeout))
}

// apiserverArgs is the smallest configuration that serves the built-in APIs
// on loopback only. The endpoint reconciler is off so that the apiserver
// never publishes its address in the "kubernetes" Service, and the
// ServiceAccount admission plugin is off because nothing here runs the
// token controller it waits for.
//
// WatchList is off because it needs etcd's watch progress requests, which
// the apiserver trusts only from etcd 3.4.31 or 3.5.13 on; Debian ships
// 3.4.23. With it on, a watch without a resource version waits 3s for the
// watch cache and then fails with "Too large resource version", and
// streaming lists fail (client-go falls back to LIST). With it off, watches
// and lists take the classic path, as against any etcd 3.4.
func apiserverArgs(dir, etcdURL string, securePort int, creds credentials) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--tls-cert-file=" + creds.servingCert,
		"--tls-private-key-file=" + creds.servingKey,
		"--token-auth-file=" + creds.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + creds.saPublic,
		"--service-account-signing-key-file=" + creds.saPrivate,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--feature-gates=WatchList=false",
	}
}

// freePorts picks n distinct free loopback ports, holding them all until
// every one is chosen so that none is handed out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady polls url until it answers 200 "ok"-ish, p exits, or the
// deadline passes.
func waitReady(p *process, client *http.Client, url, token string, deadline time.Time) error {
	for {
		if p.exited() {
			if p.logContains("address already in use") {
				return fmt.Errorf("%s: %w", p.name, errPortTaken)
			}
			return fmt.Errorf("%s exited before it was ready: %v", p.name, p.exitErr())
		}
		ok, last := probe(client, url, token)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s; last answer from %s: %s", p.name, readyTimeout, url, last)
		}
		select {
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func probe(client *http.Client, url, token string) (ok bool, status string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	status = fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(body)))
	return resp.StatusCode == http.StatusOK, status
}

// stop ends the apiserver before etcd so that it does not log a storm of
// connection errors on the way down.
func (s *Server) stop() error {
	var errs []error
	for _, p := range []*process{s.apiserver, s.etcd} {
		if p != nil {
			errs = append(errs, p.stop())
		}
	}
	return errors.Join(errs...)
}

func (s *Server) logTails() string {
	var b strings.Builder
	for _, p := range []*process{s.etcd, s.apiserver} {
		if p != nil {
			fmt.Fprintf(&b, "--- last %d lines of %s ---\n%s", logTailLines, p.logPath, p.tail(logTailLines))
		}
	}
	return b.String()
}
