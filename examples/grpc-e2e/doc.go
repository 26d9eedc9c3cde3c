// Package grpce2e checks ramjet's gRPC data plane end to end with a real
// gRPC server and client (google.golang.org/grpc and its health service):
// clients over TLS with ALPN h2 and over cleartext HTTP/2 with prior
// knowledge, server streaming, grpc-status carried in trailers, and the
// 502 for a backend not marked GRPC. It is a module of its own so that the
// library's go.mod never depends on gRPC.
package grpce2e
