package h2

import (
	"encoding/binary"
	"fmt"
)

// Frame types (RFC 9113 §6).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9
)

// Frame flags.
const (
	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// errCode is an HTTP/2 error code (RFC 9113 §7).
type errCode uint32

const (
	codeNo                 errCode = 0x0
	codeProtocol           errCode = 0x1
	codeInternal           errCode = 0x2
	codeFlowControl        errCode = 0x3
	codeStreamClosed       errCode = 0x5
	codeFrameSize          errCode = 0x6
	codeRefusedStream      errCode = 0x7
	codeCancel             errCode = 0x8
	codeCompression        errCode = 0x9
	codeEnhanceYourCalm    errCode = 0xb
	codeInadequateSecurity errCode = 0xc
)

// Settings (RFC 9113 §6.5.2).
const (
	settingHeaderTableSize      = 0x1
	settingEnablePush           = 0x2
	settingMaxConcurrentStreams = 0x3
	settingInitialWindowSize    = 0x4
	settingMaxFrameSize         = 0x5
	settingMaxHeaderListSize    = 0x6
)

const (
	frameHeaderLen   = 9
	defaultFrameSize = 16384 // SETTINGS_MAX_FRAME_SIZE's initial value
	maxFrameSizeMax  = 1<<24 - 1
	defaultWindow    = 65535
	maxWindow        = 1<<31 - 1
	prefaceLen       = 24
)

const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// connError ends the connection with GOAWAY and code.
type connError struct {
	code   errCode
	reason string
}

func (e connError) Error() string {
	return fmt.Sprintf("h2: connection error %d: %s", e.code, e.reason)
}

// frameHeader is a frame's first nine bytes.
type frameHeader struct {
	length uint32
	typ    uint8
	flags  uint8
	stream uint32
}

func parseFrameHeader(b []byte) frameHeader {
	return frameHeader{
		length: uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		typ:    b[3],
		flags:  b[4],
		stream: binary.BigEndian.Uint32(b[5:]) & (1<<31 - 1),
	}
}

func appendFrameHeader(dst []byte, length int, typ, flags uint8, stream uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24), byte(stream>>16), byte(stream>>8), byte(stream))
}

func appendUint32(dst []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, v)
}

func appendRSTStream(dst []byte, stream uint32, code errCode) []byte {
	dst = appendFrameHeader(dst, 4, frameRSTStream, 0, stream)
	return appendUint32(dst, uint32(code))
}

func appendWindowUpdate(dst []byte, stream uint32, incr uint32) []byte {
	dst = appendFrameHeader(dst, 4, frameWindowUpdate, 0, stream)
	return appendUint32(dst, incr)
}

func appendGoAway(dst []byte, last uint32, code errCode) []byte {
	dst = appendFrameHeader(dst, 8, frameGoAway, 0, 0)
	dst = appendUint32(dst, last)
	return appendUint32(dst, uint32(code))
}

func appendSetting(dst []byte, id uint16, v uint32) []byte {
	dst = binary.BigEndian.AppendUint16(dst, id)
	return appendUint32(dst, v)
}

// unpad strips a padded frame's padding (§6.1): the pad length byte and
// the padding; a pad at least as long as the payload is a PROTOCOL_ERROR.
func unpad(p []byte, flags uint8) ([]byte, error) {
	if flags&flagPadded == 0 {
		return p, nil
	}
	if len(p) == 0 || int(p[0]) >= len(p) {
		return nil, connError{codeProtocol, "padding too long"}
	}
	return p[1 : len(p)-int(p[0])], nil
}
