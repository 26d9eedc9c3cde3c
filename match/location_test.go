package match

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Result.Location hands on the whole location a lookup chose, a route's or
// its host's fallback's, so the router applies to requests no route matches
// every check it applies to a route's (SPEC §6); a route without backend
// TLS of its own has its host's, as ingress-nginx writes that in the
// server block.
func TestResultLocation(t *testing.T) {
	r, h := &Route{Location: everyLocationField(t)}, &VirtualHost{FallbackLocation: everyLocationField(t)}
	assert.True(t, (Result{Host: h, Route: r}).Location() == r.Location, "a route's")
	assert.True(t, (Result{Host: h}).Location() == h.FallbackLocation, "a fallback's")
	assert.True(t, (Result{}).Location() == Location{}, "no host's")

	r.BackendTLS = nil
	want := r.Location
	want.BackendTLS = h.FallbackLocation.BackendTLS
	assert.True(t, (Result{Host: h, Route: r}).Location() == want, "a route without backend TLS has its host's")
}

// everyLocationField is a Location with each field set to a distinct
// value.
func everyLocationField(t *testing.T) Location {
	var l Location
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		require.Equal(t, reflect.Pointer, f.Kind(), "Location.%s: set a value of it here", v.Type().Field(i).Name)
		f.Set(reflect.New(f.Type().Elem()))
	}
	return l
}
