package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// custom-http-errors as ingress-nginx reads it: the annotation passes its
// validator (400 to 599, spaces removed) and each trimmed entry is a
// number; the ConfigMap key takes any code above 299.
func TestParseHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		value      string
		annotation bool
		want       []int
		bad        bool
	}{
		{value: "404,500", annotation: true, want: []int{404, 500}},
		{value: "503, 404, 503", annotation: true, want: []int{404, 503}},
		{value: "404,", annotation: true, want: []int{404}},
		{value: "200,404", annotation: true, bad: true},
		{value: "404;500", annotation: true, bad: true},
		{value: "4044", annotation: true, bad: true},
		{value: "", annotation: true, bad: true},
		{value: "301,404", want: []int{301, 404}},
		{value: "299", bad: true},
		{value: "600", bad: true},
		{value: "abc", bad: true},
	} {
		got, err := ParseHTTPErrors(tc.value, tc.annotation)
		if tc.bad {
			assert.Error(t, err, tc.value)
			continue
		}
		assert.NoError(t, err, tc.value)
		assert.Equal(t, tc.want, got, tc.value)
	}
}

// A negative or absurd limit-rate is no limit or a bounded one, never an
// overflow.
func TestLimitRateValues(t *testing.T) {
	for value, want := range map[string]int64{"1": 1024, "0": 0, "-5": 0, "100": 102400, "9223372036854775807": 1 << 50} {
		var v annotationValues
		assert.NoError(t, applyLimitRate(func(r *responseValues) *int64 { return &r.limitRate })(&v, "limit-rate", value), value)
		assert.Equal(t, want, v.response.limitRate, value)
	}
	var v annotationValues
	assert.Error(t, applyLimitRate(func(r *responseValues) *int64 { return &r.limitRate })(&v, "limit-rate", "10k"))
}
