package main

import (
	"encoding/binary"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"ramjet.dev/ramjet/router"
)

// The OTLP trace protocol's wire format (opentelemetry-proto,
// trace/v1/trace.proto, common/v1/common.proto), written straight from a
// server span as it ends into the batch's byte slice. OpenTelemetry's SDK
// span and exporter first build a span object, snapshot it, copy it into
// generated protobuf structs and marshal those by reflection; at a span
// per request that was most of tracing's cost (issue 39). The message is
// the one the SDK's span and otlptrace's exporter send for the same span,
// field for field: TestOTLPMatchesSDK decodes both and compares.

// Field numbers, by message.
const (
	// ExportTraceServiceRequest
	fRequestResourceSpans = 1
	// ResourceSpans
	fResourceSpansResource   = 1
	fResourceSpansScopeSpans = 2
	// Resource
	fResourceAttributes = 1
	// ScopeSpans
	fScopeSpansScope = 1
	fScopeSpansSpans = 2
	// InstrumentationScope
	fScopeName    = 1
	fScopeVersion = 2
	// Span
	fSpanTraceID      = 1
	fSpanSpanID       = 2
	fSpanTraceState   = 3
	fSpanParentSpanID = 4
	fSpanName         = 5
	fSpanKind         = 6
	fSpanStart        = 7
	fSpanEnd          = 8
	fSpanAttributes   = 9
	fSpanStatus       = 15
	fSpanFlags        = 16
	// Status
	fStatusCode = 3
	// Status.StatusCode
	statusCodeOk    = 1
	statusCodeError = 2
	// KeyValue
	fKeyValueKey   = 1
	fKeyValueValue = 2
	// AnyValue
	fAnyString = 1
	fAnyInt    = 3

	// SpanFlags: the parent's remoteness is known, and it is remote.
	spanFlagsHasIsRemote = 0x100
	spanFlagsIsRemote    = 0x200
)

// otlpEncoder writes OTLP messages. A nested message is written in
// place after a one-byte length, moved up in the rare case it needs more.
type otlpEncoder struct {
	b []byte
}

// open starts a length-delimited field and returns where its length goes.
func (e *otlpEncoder) open(num protowire.Number) int {
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = append(e.b, 0)
	return len(e.b) - 1
}

// close writes the length of the field open returned at.
func (e *otlpEncoder) close(at int) {
	n := len(e.b) - at - 1
	if n < 0x80 {
		e.b[at] = byte(n)
		return
	}
	w := protowire.SizeVarint(uint64(n))
	e.b = append(e.b, make([]byte, w-1)...)
	copy(e.b[at+w:], e.b[at+1:at+1+n])
	protowire.AppendVarint(e.b[at:at], uint64(n))
}

// str writes a string field; proto3 leaves out an empty one.
func (e *otlpEncoder) str(num protowire.Number, v string) {
	if v == "" {
		return
	}
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = protowire.AppendString(e.b, v)
}

func (e *otlpEncoder) fixed64(num protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, num, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, v)
}

// attribute writes one KeyValue field num: a string, or an integer. A
// oneof member is written even when zero or empty, unlike a scalar
// proto3 field: a receiver tells int 0 from no value by it.
func (e *otlpEncoder) attribute(num protowire.Number, key string, a router.SpanAttribute) {
	a.Key = key
	e.attributes(num, []router.SpanAttribute{a})
}

// nestedAttribute is attribute by nested messages, for any lengths.
func (e *otlpEncoder) nestedAttribute(num protowire.Number, key string, a router.SpanAttribute) {
	at := e.open(num)
	e.str(fKeyValueKey, key)
	v := e.open(fKeyValueValue)
	if a.IsInt {
		e.b = protowire.AppendTag(e.b, fAnyInt, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(a.Int))
	} else {
		e.b = protowire.AppendTag(e.b, fAnyString, protowire.BytesType)
		e.b = protowire.AppendString(e.b, a.Value)
	}
	e.close(v)
	e.close(at)
}

// span writes a server span as a Span field num: what the SDK's span
// holds for it and otlptrace sends (status always present, the flags
// saying whether the parent is remote). Its length goes in two bytes
// reserved ahead (a span is rarely under 128 or over 16383 bytes), its
// fixed-size fields are written whole, tags as the constant bytes they
// are. TestOTLPSpanBytes holds it to the span written field by field.
func (e *otlpEncoder) span(num protowire.Number, s *otelSpan, end *router.SpanEnd) {
	const (
		tagTraceID = fSpanTraceID<<3 | byte(protowire.BytesType)
		tagSpanID  = fSpanSpanID<<3 | byte(protowire.BytesType)
		tagParent  = fSpanParentSpanID<<3 | byte(protowire.BytesType)
		tagKind    = fSpanKind<<3 | byte(protowire.VarintType)
		tagStart   = fSpanStart<<3 | byte(protowire.Fixed64Type)
		tagEnd     = fSpanEnd<<3 | byte(protowire.Fixed64Type)
		tagStatus  = fSpanStatus<<3 | byte(protowire.BytesType)
		tagCode    = fStatusCode<<3 | byte(protowire.VarintType)
		// Field 16 (flags), fixed32, takes a tag of two bytes.
		tagFlags0, tagFlags1 = byte(fSpanFlags<<3|byte(protowire.Fixed32Type)) | 0x80, byte(fSpanFlags >> 4)
	)
	b := e.b
	if num < 16 {
		b = append(b, byte(num)<<3|byte(protowire.BytesType))
	} else {
		b = protowire.AppendTag(b, num, protowire.BytesType)
	}
	at := len(b)
	b = append(b, 0, 0, tagTraceID, 16)
	b = append(b, s.traceID[:]...)
	b = append(b, tagSpanID, 8)
	b = append(b, s.spanID[:]...)
	b = appendStringField(b, fSpanTraceState, s.state)
	if s.remoteParent {
		b = append(append(b, tagParent, 8), s.parentID[:]...)
	}
	b = appendStringField(b, fSpanName, end.Name)
	b = append(b, tagKind, byte(trace.SpanKindServer))
	if v := unixNano(s.start.UnixNano()); v != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, tagStart), v)
	}
	if v := unixNano(end.Time.UnixNano()); v != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, tagEnd), v)
	}
	e.b = b
	e.attributes(fSpanAttributes, end.Attributes)
	code := byte(statusCodeOk)
	if end.Error {
		code = statusCodeError
	}
	flags := uint32(s.flags) | spanFlagsHasIsRemote
	if s.remoteParent {
		flags |= spanFlagsIsRemote
	}
	b = append(e.b, tagStatus, 2, tagCode, code, tagFlags0, tagFlags1)
	e.b = binary.LittleEndian.AppendUint32(b, flags)
	e.closeReserved(at)
}

// attributes writes attrs as KeyValue fields num, as nestedAttribute
// does. An attribute whose lengths take one byte each (nearly all of a
// span's) is written by appends of tags and lengths as bytes, with no
// message opened and closed; any other, or a field number of two tag
// bytes, by nestedAttribute.
func (e *otlpEncoder) attributes(num protowire.Number, attrs []router.SpanAttribute) {
	const (
		tagKey    = fKeyValueKey<<3 | byte(protowire.BytesType)
		tagValue  = fKeyValueValue<<3 | byte(protowire.BytesType)
		tagString = fAnyString<<3 | byte(protowire.BytesType)
		tagInt    = fAnyInt<<3 | byte(protowire.VarintType)
	)
	if num >= 16 {
		for _, a := range attrs {
			e.nestedAttribute(num, a.Key, a)
		}
		return
	}
	tagAttr := byte(num)<<3 | byte(protowire.BytesType)
	b := e.b
	for i := range attrs {
		a := &attrs[i]
		k := len(a.Key)
		if a.IsInt {
			v := uint64(a.Int)
			if k == 0 || v >= 1<<21 || 5+k+3 >= 0x80 {
				e.b = b
				e.nestedAttribute(num, a.Key, *a)
				b = e.b
				continue
			}
			// Statuses and ports take two or three bytes.
			switch {
			case v < 1<<7:
				b = append(b, tagAttr, byte(6+k), tagKey, byte(k))
				b = append(append(b, a.Key...), tagValue, 2, tagInt, byte(v))
			case v < 1<<14:
				b = append(b, tagAttr, byte(7+k), tagKey, byte(k))
				b = append(append(b, a.Key...), tagValue, 3, tagInt, byte(v)|0x80, byte(v>>7))
			default:
				b = append(b, tagAttr, byte(8+k), tagKey, byte(k))
				b = append(append(b, a.Key...), tagValue, 4, tagInt, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14))
			}
			continue
		}
		vl := len(a.Value)
		if k == 0 || 6+k+vl >= 0x80 {
			e.b = b
			e.nestedAttribute(num, a.Key, *a)
			b = e.b
			continue
		}
		b = append(b, tagAttr, byte(6+k+vl), tagKey, byte(k))
		b = append(append(b, a.Key...), tagValue, byte(2+vl), tagString, byte(vl))
		b = append(b, a.Value...)
	}
	e.b = b
}

// appendStringField appends a string field num (under 16) of v; proto3
// leaves out an empty one.
func appendStringField(b []byte, num protowire.Number, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, byte(num)<<3|byte(protowire.BytesType))
	if len(v) < 0x80 {
		b = append(b, byte(len(v)))
	} else {
		b = protowire.AppendVarint(b, uint64(len(v)))
	}
	return append(b, v...)
}

// closeReserved writes the length of a field whose two bytes at at were
// reserved for it: the length in them, moved down a byte when it takes
// one, up when it takes more than two.
func (e *otlpEncoder) closeReserved(at int) {
	n := len(e.b) - at - 2
	switch {
	case n < 0x80:
		copy(e.b[at+1:], e.b[at+2:])
		e.b = e.b[:len(e.b)-1]
		e.b[at] = byte(n)
	case n < 0x4000:
		e.b[at], e.b[at+1] = byte(n)|0x80, byte(n>>7)
	default:
		w := protowire.SizeVarint(uint64(n))
		e.b = append(e.b, make([]byte, w-2)...)
		copy(e.b[at+w:], e.b[at+2:at+2+n])
		protowire.AppendVarint(e.b[at:at], uint64(n))
	}
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

// resourceField is the Resource field of a ResourceSpans with the
// service.name attribute.
func resourceField(service string) []byte {
	var e otlpEncoder
	at := e.open(fResourceSpansResource)
	e.attribute(fResourceAttributes, "service.name", router.SpanAttribute{Value: service})
	e.close(at)
	return e.b
}

// scopeField is the InstrumentationScope field of a ScopeSpans.
func scopeField(name, version string) []byte {
	var e otlpEncoder
	at := e.open(fScopeSpansScope)
	e.str(fScopeName, name)
	e.str(fScopeVersion, version)
	e.close(at)
	return e.b
}
