package h1

import "bufio"

// WriteField writes the field line "k: v\r\n" to bw. When the line fits
// in what bw has left it is put together there and copied once, which
// costs about half of four writes to bw: heads are written a field at a
// time, a dozen or more per request each way.
func WriteField(bw *bufio.Writer, k, v string) {
	if len(k)+len(v)+4 > bw.Available() {
		bw.WriteString(k)
		bw.WriteString(": ")
		bw.WriteString(v)
		bw.WriteString("\r\n")
		return
	}
	b := bw.AvailableBuffer()
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	b = append(b, "\r\n"...)
	bw.Write(b)
}
