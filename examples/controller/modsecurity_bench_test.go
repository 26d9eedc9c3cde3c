package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkModSecurity: a clean GET over loopback, through the controller
// to a loopback backend, on a location without the WAF and on one with
// the OWASP CRS in DetectionOnly (ingress-nginx's default engine mode);
// ns/op with p50 and p99 of the run.
func BenchmarkModSecurity(b *testing.B) {
	dir := b.TempDir()
	port := bodyBackend(b)
	hosts := map[string]map[string]string{
		"plain.test": {},
		"crs.test":   {"enable-modsecurity": "true", "enable-owasp-core-rules": "true"},
	}
	if err := writeBench(filepath.Join(dir, "app.yaml"), wafManifests(port, hosts)); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = inst.Wait()
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	for _, host := range []string{"plain.test", "crs.test"} {
		b.Run(host, func(b *testing.B) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/products?id=42&q=blue+shoes", nil)
			req.Host = host
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
			req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
			req.Header.Set("Accept-Language", "en-US,en;q=0.5")
			req.Header.Set("Cookie", "session=3f2a9c1e7b; theme=dark")
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t0))
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

func writeBench(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
