package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocumentOverTheRequestLimit: a document larger than the API server
// takes in one request (3 MiB; kubectl apply is refused "Request entity
// too large") is an error and is not parsed, which for a document of tens
// of megabytes took minutes and gigabytes; its neighbours are read. The
// items of a List are sent one by one, so a large List is read.
func TestDocumentOverTheRequestLimit(t *testing.T) {
	svc := func(name string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\n"
	}
	big := strings.Repeat("x", 3<<20)
	data := svc("before") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  k: " + big + "\n---\n" + svc("after")
	r := NewReader()
	err := r.Decode("in", []byte(data))
	require.Equal(t, []string{`in document 2 (line 5): the document is 3.0 MiB, more than the 3 MiB the API server takes in one request: not read`}, loadErrors(err))
	snap, _ := r.Snapshot()
	require.Equal(t, []string{"Service default/before", "Service default/after"}, loadedObjects(snap))

	json := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}` + "\n" +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + big + `"}}`
	r = NewReader()
	err = r.Decode("in.json", []byte(json))
	require.Equal(t, []string{`in.json document 2 (line 2, ConfigMap default/big): the document is 3.0 MiB, more than the 3 MiB the API server takes in one request: not read`}, loadErrors(err))

	half := strings.Repeat("x", 2<<20)
	list := `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"` + half + `"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":"` + half + `"}}]}`
	snap, _, err = Decode("list.json", []byte(list))
	require.NoError(t, err)
	require.Equal(t, []string{"ConfigMap default/a", "ConfigMap default/b"}, loadedObjects(snap))
}
