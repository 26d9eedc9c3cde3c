package compile

// CompilerReuses is how many compiles c answered with reused work.
func CompilerReuses(c *Compiler) int { return c.reuses }
