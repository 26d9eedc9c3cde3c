package match

import (
	"fmt"
	"slices"
	"strings"
)

// BlockList is the ConfigMap's block-user-agents or block-referers
// (SPEC §1): ingress-nginx writes the entries as the keys of an nginx map
// ("map $http_user_agent $block_ua"), and every server answers 403 to a
// request whose header the map finds. An entry starting with "~" is a
// regular expression matched anywhere in the value, "~*" one matched
// without case; any other is the whole value, compared without case, as
// nginx's map compares its string keys. An absent or empty header is
// never blocked: nginx's map runs no regex on an empty value.
type BlockList struct {
	entries []string
	exact   map[string]bool // lower case
	regexes []*Regexp
}

// NewBlockList compiles entries, each an nginx map key as it reads the
// configuration (quotes and escapes already taken off). It fails on a
// regular expression that does not compile, or an entry nginx's map
// takes for one of its own parameters.
func NewBlockList(entries []string) (*BlockList, error) {
	b := &BlockList{exact: map[string]bool{}}
	for _, e := range entries {
		switch {
		case e == "" || e == "default" || e == "include":
			return nil, fmt.Errorf("%q is a parameter of nginx's map, not a value", e)
		case strings.HasPrefix(e, "~"):
			pattern, fold := strings.CutPrefix(e[1:], "*")
			re, err := CompileSearchRegex(pattern, !fold)
			if err != nil {
				return nil, err
			}
			b.regexes = append(b.regexes, re)
		default:
			// map takes one leading backslash off, so that "\~a" is the
			// string "~a".
			b.exact[strings.ToLower(strings.TrimPrefix(e, `\`))] = true
		}
		b.entries = append(b.entries, e)
	}
	return b, nil
}

// Entries are the entries as NewBlockList got them.
func (b *BlockList) Entries() []string {
	if b == nil {
		return nil
	}
	return slices.Clone(b.entries)
}

// Blocks reports whether the header value v is on the list.
func (b *BlockList) Blocks(v string) bool {
	if b == nil || v == "" {
		return false
	}
	if len(b.exact) > 0 && b.exact[strings.ToLower(v)] {
		return true
	}
	for _, re := range b.regexes {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}
