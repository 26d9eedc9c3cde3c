package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/rawsock"
)

// otlpBatcher is the span processor and OTLP/gRPC exporter in one: it
// writes each ended, sampled span into the batch being filled, in OTLP's
// wire format (otlpwire.go), and sends a batch to the collector once it
// holds MaxExportBatchSize spans or ScheduleDelay has passed since its
// first, as the SDK's batch span processor does with its settings (the
// ingress-nginx module's batch processor keys). At most MaxQueueSize
// spans wait; beyond, spans are dropped (and counted) rather than held
// or waited for. A span costs the request one encoding into a buffer and
// nothing more: no copy into protobuf structs, no channel send, no
// goroutine woken but once a batch. An export that fails is logged and
// its spans dropped, as the module's exporter does; a request never
// waits for the collector.
type otlpBatcher struct {
	log       *slog.Logger
	conn      *grpc.ClientConn
	collector string // host:port, named in the warnings
	batchSize int
	queueSize int
	delay     time.Duration
	timeout   time.Duration // of one export
	resource  []byte        // the Resource field of every request
	scope     []byte        // the InstrumentationScope field

	mu      sync.Mutex
	cur     *otlpBatch
	queued  int // spans in full batches not yet sent
	dropped int // since the last warning
	lost    int // in all
	stopped bool
	free    []*otlpBatch

	full  chan *otlpBatch
	flush chan chan struct{}
	wake  chan struct{} // the first span of a batch: start its timer
	done  chan struct{}
	quit  chan struct{}
}

// otlpBatch is a batch's encoded Span fields and their count.
type otlpBatch struct {
	enc   otlpEncoder
	spans int
}

// otlpTarget is the gRPC target of a collector endpoint: host:port, or
// OTEL_EXPORTER_OTLP_ENDPOINT's URL form (http://host:port).
func otlpTarget(endpoint string) string {
	if strings.Contains(endpoint, "://") {
		if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
			return u.Host
		}
	}
	return endpoint
}

// otlpDial connects to the collector as gRPC's own dialer does, with the
// connection's reads and writes raw (router/rawsock), as the controller's
// client and backend connections are. gRPC's socket calls are Go's, which
// tell the scheduler they are in the kernel: each export's calls woke a
// sleeping sysmon into polling every 20 µs for a millisecond or more, and
// a call sysmon finds still in the kernel (a batch's writes on loopback
// run the collector's TCP receive too) can have its processor handed to
// another thread. On the load harness that doubled the controller's
// context switches per request (0.13 to 0.25) and cost about 1 µs of
// sysmon per traced request, half what making and encoding the span cost.
func otlpDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return rawsock.NetConn(c), nil
}

// otlpProxied reports an HTTPS proxy in the environment, which gRPC's
// own dialer goes through (CONNECT) and a dialer of one's own would not.
func otlpProxied() bool {
	return os.Getenv("HTTPS_PROXY") != "" || os.Getenv("https_proxy") != ""
}

// newOTLPBatcher exports to endpoint with s's batch settings, as the
// resource service and the instrumentation scope "nginx".
func newOTLPBatcher(log *slog.Logger, endpoint, service string, s otelSettings) (*otlpBatcher, error) {
	// Lazy, as the SDK's exporter: an absent collector never holds up a
	// request, and the connection is retried in the background.
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if !otlpProxied() {
		opts = append(opts, grpc.WithContextDialer(otlpDial))
	}
	conn, err := grpc.NewClient(otlpTarget(endpoint), opts...)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	queue := max(s.MaxQueueSize, 1)
	batch := min(max(s.MaxExportBatchSize, 1), queue)
	b := &otlpBatcher{
		log: log, conn: conn, collector: endpoint, resource: resourceField(service), scope: scopeField(otelScope, ""), batchSize: batch, queueSize: queue, delay: s.ScheduleDelay, timeout: 10 * time.Second,
		full:  make(chan *otlpBatch, queue/batch+1),
		flush: make(chan chan struct{}),
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		quit:  make(chan struct{}),
	}
	go b.run()
	return b, nil
}

// add writes the sampled span s, ending with e, into the current batch,
// encoded in place: a span's encoding (about a microsecond's third)
// under the batch's lock costs less than encoding it apart and copying
// it in, and the lock is taken once a request.
func (b *otlpBatcher) add(s *otelSpan, e *router.SpanEnd) {
	b.mu.Lock()
	if b.stopped || b.queued+b.curSpans() >= b.queueSize {
		b.dropped++
		b.lost++
		b.mu.Unlock()
		return
	}
	if b.cur == nil {
		b.cur = b.newBatch()
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	b.cur.enc.span(fScopeSpansSpans, s, e)
	b.cur.spans++
	if b.cur.spans >= b.batchSize {
		b.queued += b.cur.spans
		b.full <- b.cur // never blocks: queueSize bounds the full batches
		b.cur = nil
	}
	b.mu.Unlock()
}

func (b *otlpBatcher) curSpans() int {
	if b.cur == nil {
		return 0
	}
	return b.cur.spans
}

// newBatch is an empty batch, reusing a sent one's buffer; b.mu held.
func (b *otlpBatcher) newBatch() *otlpBatch {
	if n := len(b.free); n > 0 {
		t := b.free[n-1]
		b.free = b.free[:n-1]
		t.enc.b, t.spans = t.enc.b[:0], 0
		return t
	}
	return &otlpBatch{}
}

// run sends the batches: full ones as they come, the current one when its
// delay is up or a flush asks.
func (b *otlpBatcher) run() {
	defer close(b.done)
	timer := time.NewTimer(b.delay)
	timer.Stop()
	for {
		select {
		case t := <-b.full:
			b.send(t)
		case <-b.wake:
			timer.Reset(b.delay)
		case <-timer.C:
			b.sendCurrent()
		case ack := <-b.flush:
			b.drain()
			close(ack)
		case <-b.quit:
			b.drain()
			return
		}
	}
}

// drain sends the full batches and the current one.
func (b *otlpBatcher) drain() {
	for {
		select {
		case t := <-b.full:
			b.send(t)
			continue
		default:
		}
		break
	}
	b.sendCurrent()
}

func (b *otlpBatcher) sendCurrent() {
	b.mu.Lock()
	t := b.cur
	b.cur = nil
	if t != nil {
		b.queued += t.spans
	}
	b.mu.Unlock()
	if t != nil {
		b.send(t)
	}
}

// send exports one batch as an ExportTraceServiceRequest with one
// ResourceSpans holding one ScopeSpans.
func (b *otlpBatcher) send(t *otlpBatch) {
	b.mu.Lock()
	dropped := b.dropped
	b.dropped = 0
	b.mu.Unlock()
	if dropped > 0 {
		b.log.Warn("OpenTelemetry spans dropped: the export queue is full (otel-max-queuesize)", "spans", dropped)
	}
	scopeLen := len(b.scope) + len(t.enc.b)
	rsLen := len(b.resource) + protowire.SizeTag(fResourceSpansScopeSpans) + protowire.SizeBytes(scopeLen)
	pre := make([]byte, 0, 16+len(b.resource)+len(b.scope))
	pre = protowire.AppendTag(pre, fRequestResourceSpans, protowire.BytesType)
	pre = protowire.AppendVarint(pre, uint64(rsLen))
	pre = append(pre, b.resource...)
	pre = protowire.AppendTag(pre, fResourceSpansScopeSpans, protowire.BytesType)
	pre = protowire.AppendVarint(pre, uint64(scopeLen))
	pre = append(pre, b.scope...)
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	var res exportResponse
	err := b.conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
		rawMessage{pre, t.enc.b}, &res, grpc.ForceCodecV2(rawCodec{}))
	cancel()
	if err != nil {
		b.log.Warn("OpenTelemetry spans not exported", "collector", b.collector, "spans", t.spans, "error", err)
	} else if rejected, msg := res.partialSuccess(); rejected > 0 || msg != "" {
		b.log.Warn("OpenTelemetry collector refused spans", "collector", b.collector, "spans", rejected, "error", msg)
	}
	b.mu.Lock()
	b.queued -= t.spans
	b.free = append(b.free, t)
	b.mu.Unlock()
}

// ForceFlush sends what the processor holds and waits for it to be sent.
func (b *otlpBatcher) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case b.flush <- ack:
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown sends what the processor holds, within ctx, and closes the
// connection; spans ended later are dropped.
func (b *otlpBatcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	b.mu.Unlock()
	close(b.quit)
	var err error
	select {
	case <-b.done:
	case <-ctx.Done():
		err = fmt.Errorf("OpenTelemetry spans not all exported: %w", ctx.Err())
	}
	return errors.Join(err, b.conn.Close())
}

// rawMessage is an encoded message in pieces, sent as it is.
type rawMessage [2][]byte

// exportResponse is an ExportTraceServiceResponse, kept encoded: its
// partial_success says how many spans the collector refused.
type exportResponse struct{ b []byte }

// partialSuccess is the response's partial_success (field 1): the spans
// refused (rejected_spans, 1) and why (error_message, 2).
func (r *exportResponse) partialSuccess() (rejected int64, msg string) {
	for b := r.b; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return 0, ""
			}
			for len(ps) > 0 {
				pnum, ptyp, k := protowire.ConsumeTag(ps)
				if k < 0 {
					return 0, ""
				}
				ps = ps[k:]
				switch {
				case pnum == 1 && ptyp == protowire.VarintType:
					v, k := protowire.ConsumeVarint(ps)
					if k < 0 {
						return 0, ""
					}
					rejected, ps = int64(v), ps[k:]
					continue
				case pnum == 2 && ptyp == protowire.BytesType:
					v, k := protowire.ConsumeString(ps)
					if k < 0 {
						return 0, ""
					}
					msg, ps = v, ps[k:]
					continue
				}
				k = protowire.ConsumeFieldValue(pnum, ptyp, ps)
				if k < 0 {
					return 0, ""
				}
				ps = ps[k:]
			}
			b = b[m:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
	}
	return rejected, msg
}

// rawCodec sends rawMessage and receives exportResponse, under the name
// of gRPC's protobuf codec (content-type application/grpc).
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(rawMessage)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(m[0]), mem.SliceBuffer(m[1])}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*exportResponse)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	r.b = data.Materialize()
	return nil
}
