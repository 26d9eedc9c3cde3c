package balance

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
)

// benchConfigs are one backend of n endpoints under each algorithm.
func benchConfigs(b *testing.B, n int) []struct {
	name string
	cfg  Config
} {
	weights := make([]int, n)
	for i := range weights {
		weights[i] = 1 + i%4
	}
	eps := addrs(n)
	key := mustHashKey(b, "$request_uri")
	return []struct {
		name string
		cfg  Config
	}{
		{"round_robin", Config{ID: "prod/api:80", Endpoints: eps}},
		{"least_conn", Config{ID: "prod/api:80", Endpoints: eps, Algorithm: LeastConn}},
		{"hash", Config{ID: "prod/api:80", Endpoints: eps, Algorithm: Hash, HashKey: key}},
		{"weighted", Config{ID: "prod/api:80", Endpoints: eps, weights: weights}},
		{"weighted_least_conn", Config{ID: "prod/api:80", Endpoints: eps, weights: weights, Algorithm: LeastConn}},
	}
}

// BenchmarkPick measures one first pick (with a key, which only hash uses)
// plus its Release.
func BenchmarkPick(b *testing.B) {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("/api/v1/users/%d/orders?page=%d", i*7919, i%13)
	}
	for _, n := range []int{10, 100} {
		for _, bc := range benchConfigs(b, n) {
			bal := NewRegistry().Balancer(bc.cfg)
			b.Run(fmt.Sprintf("%s/%d/serial", bc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					e, _ := bal.Pick(keys[i&1023])
					e.Release()
					i++
				}
			})
			b.Run(fmt.Sprintf("%s/%d/parallel", bc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := rand.IntN(1024)
					for pb.Next() {
						e, _ := bal.Pick(keys[i&1023])
						e.Release()
						i++
					}
				})
			})
		}
	}
}

// BenchmarkPickRetry measures a first pick and one retry elsewhere.
func BenchmarkPickRetry(b *testing.B) {
	for _, bc := range benchConfigs(b, 10) {
		bal := NewRegistry().Balancer(bc.cfg)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var tried [3]Endpoint
				tried[0], _ = bal.Pick("/cart")
				tried[1], _ = bal.Pick("/cart", tried[:1]...)
				tried[0].Release()
				tried[1].Release()
			}
		})
	}
}

func BenchmarkExtract(b *testing.B) {
	r := &http.Request{
		RemoteAddr: "192.0.2.7:51234",
		RequestURI: "/api/v1/users/42",
		Header: http.Header{
			"X-User-Id": {"u-42"},
			"Cookie":    {"theme=dark; lang=en; consent=yes", "session=abc123"},
		},
	}
	for _, expr := range []string{"$remote_addr", "$request_uri", "$http_x_user_id", "$cookie_session"} {
		k := mustHashKey(b, expr)
		b.Run(expr[1:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if k.extract(r) == "" {
					b.Fatal("no key")
				}
			}
		})
	}
}

// BenchmarkBuildRotation builds the rotation of 1,000 endpoints with
// weights from 1 to 100 (capped at maxRotation).
func BenchmarkBuildRotation(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	weights := make([]int, 1000)
	for i := range weights {
		weights[i] = 1 + rng.IntN(100)
	}
	b.ReportAllocs()
	for b.Loop() {
		buildRotation(weights, maxRotation)
	}
}

// BenchmarkNewRing builds the hash ring of a backend.
func BenchmarkNewRing(b *testing.B) {
	for _, n := range []int{10, 1000} {
		eps := addrs(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newRing(eps, nil)
			}
		})
	}
}
