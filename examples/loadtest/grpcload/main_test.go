package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// TestClient runs the client briefly against a TLS gRPC server: calls
// go through with the authority asked for, and the summary reads as wrk's.
func TestClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	authorities := make(chan string, 1)
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if md, ok := metadata.FromIncomingContext(ctx); ok && len(md[":authority"]) > 0 {
				select {
				case authorities <- md[":authority"][0]:
				default:
				}
			}
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(ln) }()
	defer s.Stop()

	var out, errs bytes.Buffer
	if code := run([]string{"-role", "client", "-addr", ln.Addr().String(), "-authority", "grpc.load", "-c", "2", "-streams", "2", "-d", "500ms"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	m := regexp.MustCompile(`(?m)^  (\d+) requests in [\d.]+s$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no summary:\n%s", out.String())
	}
	if n, _ := strconv.Atoi(m[1]); n < 2 || strings.Contains(out.String(), "Non-2xx") || !regexp.MustCompile(`(?m)^Requests/sec: [1-9]`).MatchString(out.String()) ||
		!regexp.MustCompile(`(?m)^     99%   [\d.]+ms$`).MatchString(out.String()) {
		t.Fatalf("summary:\n%s", out.String())
	}
	if a := <-authorities; a != "grpc.load" {
		t.Errorf(":authority %q, want grpc.load", a)
	}
}

// TestBackend: the backend answers the health service's Check over h2c,
// says ready, and stops by itself after -max.
func TestBackend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out, errs bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"-role", "backend", "-listen", addr, "-max", "2s"}, &out, &errs) }()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check: %v %v", resp, err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backend did not stop after -max")
	}
	if !strings.Contains(out.String(), "ready") {
		t.Errorf("output %q", out.String())
	}
}

func TestArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-role", "backend", "-listen", "10.0.0.1:80"},
		{"-role", "client", "-addr", "example.com:443"},
		{"-role", "client", "-c", "0"},
		{"-role", "client", "-d", "11m"},
		{"-role", "other"},
		{"-no-such-flag"},
	} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 || out.Len() > 0 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errs.String())
		}
	}
}

func selfSigned(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"grpc.load"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
