// Command otlpsink is an OTLP/gRPC trace collector that keeps nothing: it
// counts the spans exported to it and prints the count when it stops. The
// load harness (examples/loadtest/compare.sh, config controller-otel)
// points the controller's exporter at it, so that tracing is measured
// with its export, on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

type sink struct {
	collectortrace.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (s *sink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	var n int64
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += int64(len(ss.Spans))
		}
	}
	s.spans.Add(n)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:4317", "listen address (loopback only)")
	maxRun := flag.Duration("max", 30*time.Minute, "stop after this long whatever happens")
	flag.Parse()
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("otlpsink: -listen %q: a loopback address is required", *listen)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	s := &sink{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(*maxRun):
	}
	srv.Stop()
	fmt.Printf("spans %d\n", s.spans.Load())
}
