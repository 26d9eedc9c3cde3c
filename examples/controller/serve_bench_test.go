package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkServe is the plain-HTTP path as the example controller serves
// it, started offline as the load harness starts it (examples/loadtest:
// -manifests, an ingress-nginx ConfigMap, no access log, no metrics),
// against a backend answering from constants, with a client on one
// keep-alive connection sending what wrk sends. The ConfigMap lifts
// keep-alive-requests (1000 by default, after which the answer says
// Connection: close and the connection ends), which wrk meets by
// reconnecting and this loop cannot. It is router's
// BenchmarkLoop with the controller's wiring (issue 41): what the
// controller adds to a request shows as the difference between the two,
// in allocs/op and B/op above all (cpu-ns/op is the whole process's).
func BenchmarkServe(b *testing.B) {
	backend := cannedHTTPBackend(b)
	_, port, _ := net.SplitHostPort(backend)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(appManifests(port)), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata: {keep-alive-requests: \"1000000000\"}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := parseFlags([]string{"-manifests", dir, "-configmap", "ingress/nginx", "-http-addr", "127.0.0.1:0", "-debug-addr", "", "-enable-access-log=false"},
		io.Discard, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = inst.Wait()
	})
	c, err := net.Dial("tcp", inst.HTTPAddr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /api/v1/items?id=42 HTTP/1.1\r\nHost: app.test\r\n\r\n")
	br := bufio.NewReaderSize(c, 4096)
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("status %d", res.StatusCode)
	}
	// The response's length, learnt from a second one: its head is
	// fixed but for the request ID and the date, of fixed lengths.
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		n += len(line)
		if len(line) == 2 {
			break
		}
	}
	n += 3
	_, _ = br.Discard(3)
	buf := make([]byte, n)
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	for range b.N {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte("\r\n\r\nok\n")) {
		b.Fatalf("response %q", buf)
	}
}
