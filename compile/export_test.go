package compile

// CompilerReuses is how many compiles c answered with the previous
// result, and CompilerRecompiles how many compiled only what changed.
func CompilerReuses(c *Compiler) int { return c.reuses }

func CompilerRecompiles(c *Compiler) int { return c.recompiles }
