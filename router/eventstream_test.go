package router

import (
	"net/http"
	"strings"
	"testing"
	"unicode"
)

// isEventStream decides as strings.ToLower and HasPrefix of the trimmed
// Content-Type, non-ASCII letters included.
func TestIsEventStream(t *testing.T) {
	const p = "text/event-stream"
	values := []string{
		"", "text/event-stream", "Text/Event-Stream; charset=utf-8", " TEXT/EVENT-STREAM ",
		"\ttext/event-stream", "text/event-strea", "text/plain", "text/event-streams",
		"te\u212Axt/event-stream", "text/event-\u017Ftream", "\u0130text/event-stream",
	}
	// Every rune that lowers to an ASCII byte, in every place of the prefix.
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < 0x80 && l != r {
			for i := range p {
				values = append(values, p[:i]+string(r)+p[i+1:])
			}
		}
	}
	for _, v := range values {
		want := strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), p)
		if got := isEventStream(http.Header{"Content-Type": {v}}); got != want {
			t.Errorf("isEventStream(%q) = %v, want %v", v, got, want)
		}
	}
	if isEventStream(http.Header{}) {
		t.Error("isEventStream without a Content-Type")
	}
}
