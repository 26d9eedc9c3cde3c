package manifest

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"ramjet.dev/ramjet/compile"
)

// Extension teaches the loader kinds compile does not read itself, such as
// the Gateway API's, whose Go types this module must not depend on
// (compile/gatewayapi registers one). The loader decodes their documents
// as strictly as its own, each error naming file, document, object and
// field, keeps them in kubectl's namespace, rejects one defined twice,
// and hands them to the extension once everything is read, because their
// meaning can depend on objects in other files.
type Extension interface {
	// Kinds lists every group, version and kind the extension reads, List
	// kinds aside, and whether the kind is namespaced. A document of one
	// of these kinds in a version not listed is an error, not a skip.
	Kinds() map[schema.GroupVersionKind]bool
	// AddToScheme registers the Go types of Kinds and of their Lists.
	AddToScheme(*runtime.Scheme) error
	// Finish turns the objects of one load (each a pointer to a type
	// AddToScheme registered, in the order read) into compile's input: it
	// adds to snap, and puts what it refuses in snap.Warnings so that
	// compile reports them with its own. The result must not depend on
	// the objects' order.
	Finish(objects []runtime.Object, snap *compile.Snapshot)
}

// registered is an Extension with what the loader derives from it once.
type registered struct {
	Extension
	kinds   map[schema.GroupVersionKind]bool
	decoder func() *kjson.Serializer
}

var registry struct {
	sync.Mutex
	exts []*registered
}

// Register adds an extension to every Load, Decode and Reader begun after
// it returns. A program registers its extensions once, before reading
// manifests. It panics when the extension claims a kind the loader or an
// earlier extension reads, or its types cannot be registered: both are
// programming errors.
func Register(e Extension) {
	kinds := e.Kinds()
	scheme := runtime.NewScheme()
	if err := e.AddToScheme(scheme); err != nil {
		panic(fmt.Sprintf("manifest.Register: %v", err))
	}
	registry.Lock()
	defer registry.Unlock()
	for gvk := range kinds {
		if _, ours := supportedVersion[gvk.GroupKind()]; ours {
			panic(fmt.Sprintf("manifest.Register: %s is read by the loader itself", gvk))
		}
		if !scheme.Recognizes(gvk) {
			panic(fmt.Sprintf("manifest.Register: %s is not in the extension's scheme", gvk))
		}
		for _, r := range registry.exts {
			if _, dup := r.kinds[gvk]; dup {
				panic(fmt.Sprintf("manifest.Register: %s is read by another extension", gvk))
			}
		}
	}
	registry.exts = append(registry.exts, &registered{Extension: e, kinds: kinds,
		decoder: sync.OnceValue(func() *kjson.Serializer {
			return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
				kjson.SerializerOptions{Strict: true})
		})})
}

// extensions is the registry as it is now.
func extensions() []*registered {
	registry.Lock()
	defer registry.Unlock()
	return registry.exts[:len(registry.exts):len(registry.exts)]
}
