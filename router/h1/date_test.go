package h1

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The cached Date is always the second the response is written in: never
// one that has passed, across second boundaries.
func TestDateFieldFollowsTheClock(t *testing.T) {
	end := time.Now().Add(1500 * time.Millisecond)
	seen := map[string]bool{}
	for time.Now().Before(end) {
		before := time.Now().Truncate(time.Second)
		line := string(dateField())
		after := time.Now()
		got, ok := strings.CutPrefix(line, "Date: ")
		if !ok || !strings.HasSuffix(got, "\r\n") {
			t.Fatalf("field line %q", line)
		}
		got = strings.TrimSuffix(got, "\r\n")
		at, err := http.ParseTime(got)
		if err != nil {
			t.Fatalf("Date %q: %v", got, err)
		}
		if at.Before(before) || at.After(after) {
			t.Fatalf("Date %q outside [%v, %v]", got, before.UTC(), after.UTC())
		}
		seen[got] = true
		time.Sleep(3 * time.Millisecond)
	}
	if len(seen) < 2 {
		t.Errorf("one Date over 1.5 s: %v", seen)
	}
}
