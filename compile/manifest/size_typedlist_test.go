package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A typed List (ConfigMapList, IngressList, ...) is sent item by item as a
// v1 List is: an item over the API server's 3 MiB is an error of its own,
// its neighbours read, the same for both kinds of list.
func TestTypedListItemOverTheRequestLimit(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	items := `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"small"},"data":{"k":"v"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + big + `"}}]`
	want := []string{`list.json document 1 items[1] (line 1, ConfigMap default/big): the document is 3.0 MiB, more than the 3 MiB the API server takes in one request: not read`}
	for _, kind := range []string{"List", "ConfigMapList"} {
		r := NewReader()
		err := r.Decode("list.json", []byte(`{"apiVersion":"v1","kind":"`+kind+`","items":`+items+`}`))
		require.Equal(t, want, loadErrors(err), kind)
		snap, _ := r.Snapshot()
		require.Equal(t, []string{"ConfigMap default/small"}, loadedObjects(snap), kind)
	}
}
