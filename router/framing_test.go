package router

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"ramjet.dev/ramjet/router/h1"
)

// BenchmarkServerGuard is BenchmarkServer's proxy=router through a
// listener with and without the guard.
func BenchmarkServerGuard(b *testing.B) {
	h := proxies(b)["router"]
	for _, guard := range []bool{false, true} {
		b.Run(fmt.Sprint("guard=", guard), func(b *testing.B) {
			front := httptest.NewUnstartedServer(h)
			if guard {
				front.Listener = h1.GuardFraming(front.Listener)
			}
			front.Start()
			defer front.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
			defer client.CloseIdleConnections()
			u := front.URL + "/api/v1/items?id=42"
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Host = "shop.example.com"
				for pb.Next() {
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}
