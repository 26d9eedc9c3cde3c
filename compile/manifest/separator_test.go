package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestBadSeparatorCostsOneDocument: text after "---" makes the document it
// begins unreadable, and only that one: the documents before and after it
// are read, and the error names the separator's line, as a user looking
// for the mistake would.
func TestBadSeparatorCostsOneDocument(t *testing.T) {
	svc := func(name string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\n"
	}
	data := svc("before") + "--- foo\n" + svc("lost") + "---\n" + svc("after") + "---bar\n---\n" + svc("last")
	r := NewReader()
	err := r.Decode("in", []byte(data))
	require.Equal(t, []string{
		`in document 2 (line 4): invalid document separator "--- foo": only a comment may follow "---"; this document is not read`,
		`in document 4 (line 12): invalid document separator "---bar": only a comment may follow "---"; this document is not read`,
	}, loadErrors(err))
	if d := cmp.Diff([]Error{
		{Position: Position{File: "in", Document: 2, Item: -1, Line: 4}},
		{Position: Position{File: "in", Document: 4, Item: -1, Line: 12}},
	}, errorFields(t, err)); d != "" {
		t.Errorf("error fields (-want +got):\n%s", d)
	}
	snap, _ := r.Snapshot()
	require.Equal(t, []string{"Service default/before", "Service default/after", "Service default/last"}, loadedObjects(snap))
}
