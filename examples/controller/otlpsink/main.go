// Command otlpsink is an OTLP/gRPC trace collector that keeps nothing: it
// counts the spans exported to it and prints the count when it stops. The
// load harness (examples/loadtest/compare.sh, config controller-otel)
// points the controller's exporter at it, so that tracing is measured
// with its export, on loopback.
//
// It runs on the load tool's CPU, standing in for a collector on another
// machine, so it does as little as it can: it walks each request's wire
// format to count the spans (an ill-formed request is refused) instead of
// decoding it into messages, which cost the load tool's CPU several times
// what the controller spends on a span.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

const exportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

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
	var spans atomic.Int64
	srv := grpc.NewServer(grpc.ForceServerCodecV2(wireCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		if m, _ := grpc.MethodFromServerStream(st); m != exportMethod {
			return status.Errorf(codes.Unimplemented, "otlpsink: no method %s", m)
		}
		var req request
		if err := st.RecvMsg(&req); err != nil {
			return err
		}
		n, err := countSpans(req.b)
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		spans.Add(int64(n))
		// An empty ExportTraceServiceResponse: everything accepted.
		return st.SendMsg(&request{})
	}))
	go func() { _ = srv.Serve(l) }()
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(*maxRun):
	}
	srv.Stop()
	fmt.Printf("spans %d\n", spans.Load())
}

// request is a message as its bytes.
type request struct{ b []byte }

// wireCodec receives and sends messages as their bytes, under the name of
// gRPC's protobuf codec.
type wireCodec struct{}

func (wireCodec) Name() string { return "proto" }

func (wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*request)
	if !ok {
		return nil, fmt.Errorf("otlpsink: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(r.b)}, nil
}

func (wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*request)
	if !ok {
		return fmt.Errorf("otlpsink: cannot unmarshal into %T", v)
	}
	r.b = data.Materialize()
	return nil
}

var errMalformed = errors.New("otlpsink: not an ExportTraceServiceRequest")

// countSpans counts the spans of an ExportTraceServiceRequest: the Span
// fields (2) of the ScopeSpans (2) of its ResourceSpans (1).
func countSpans(b []byte) (int, error) {
	n := 0
	err := fields(b, 1, func(rs []byte) error {
		return fields(rs, 2, func(ss []byte) error {
			return fields(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// fields calls f with each length-delimited field num of the message b,
// skipping the others.
func fields(b []byte, num protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return errMalformed
		}
		b = b[k:]
		if n == num && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return errMalformed
			}
			if err := f(v); err != nil {
				return err
			}
			b = b[k:]
			continue
		}
		if k = protowire.ConsumeFieldValue(n, typ, b); k < 0 {
			return errMalformed
		}
		b = b[k:]
	}
	return nil
}
