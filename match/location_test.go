package match

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLocationCarriesEveryFallbackTwin: each VirtualHost.FallbackX of a
// route feature X is a field of Location, and Result.Location hands it on
// for a route and for a fallback alike, so the router applies to requests
// no route matches every check it applies to a route's (SPEC §6).
func TestLocationCarriesEveryFallbackTwin(t *testing.T) {
	route, host := reflect.ValueOf(&Route{}).Elem(), reflect.ValueOf(&VirtualHost{}).Elem()
	loc := reflect.TypeFor[Location]()
	for i := range loc.NumField() {
		name := loc.Field(i).Name
		require.True(t, route.FieldByName(name).IsValid(), "Location.%s is no Route field", name)
		require.True(t, host.FieldByName("Fallback"+name).IsValid(), "Location.%s has no VirtualHost.Fallback%s", name, name)
		for _, f := range []reflect.Value{route.FieldByName(name), host.FieldByName("Fallback" + name)} {
			f.Set(reflect.New(f.Type().Elem()))
		}
	}
	for i := range host.NumField() {
		f := host.Type().Field(i)
		name, ok := strings.CutPrefix(f.Name, "Fallback")
		if !ok || name == "Source" || !route.FieldByName(name).IsValid() {
			continue // Fallback is the backend; FallbackSource says where it came from
		}
		_, inLocation := loc.FieldByName(name)
		require.True(t, inLocation, "VirtualHost.%s is not carried by Location", f.Name)
	}
	r, h := route.Addr().Interface().(*Route), host.Addr().Interface().(*VirtualHost)
	for _, got := range []Location{(Result{Host: h, Route: r}).Location(), (Result{Host: h}).Location()} {
		v := reflect.ValueOf(got)
		for i := range v.NumField() {
			require.False(t, v.Field(i).IsZero(), "Result.Location leaves %s out", loc.Field(i).Name)
		}
	}
}
