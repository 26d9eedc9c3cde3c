package h1

// The server tests' helpers, for the tests that serve the router
// (package h1_test, which may import router).
var (
	ServeOn      = serve
	Dial         = dial
	ReadResponse = readResponse
)

// The guard's refused heads, for the tests that put it before the router.
var (
	RefusedHeads = refusedHeads
	FoldedHeads  = guardFoldedHeads
	Smuggled     = smuggled
)
