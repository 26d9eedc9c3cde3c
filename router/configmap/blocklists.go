package configmap

import (
	"fmt"
	"strings"

	"ramjet.dev/ramjet/match"
)

// block-user-agents and block-referers: ingress-nginx splits the value on
// commas, trims each entry and writes it as a key of an nginx map
// (nginx.tmpl "map $http_user_agent $block_ua", "map $http_referer
// $block_ref"), which every server answers 403 from. Each entry is read
// as nginx reads that key: one word, quoted or with its spaces escaped.

func init() {
	Keys["block-user-agents"] = Key{Live: true, read: blockKey(func(s *Settings) **match.BlockList { return &s.BlockUserAgents })}
	Keys["block-referers"] = Key{Live: true, read: blockKey(func(s *Settings) **match.BlockList { return &s.BlockReferers })}
}

func blockKey(field func(s *Settings) **match.BlockList) func(p *parse, v string) error {
	return func(p *parse, v string) error {
		var entries []string
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			key, err := mapKey(e)
			if err != nil {
				return fmt.Errorf("%q: %v", e, err)
			}
			entries = append(entries, key)
		}
		*field(p.s) = nil
		if len(entries) == 0 {
			return nil
		}
		b, err := match.NewBlockList(entries)
		if err != nil {
			return err
		}
		*field(p.s) = b
		return nil
	}
}

// mapKey is the map key nginx reads from the word w: in quotes, or bare
// with a space escaped by a backslash; a backslash before a quote, a
// backslash, t, r or n is taken off, others stay (ngx_conf_read_token).
// Anything else nginx would read as more than one word, or as a block,
// and refuse the whole configuration.
func mapKey(w string) (string, error) {
	if q := w[0]; q == '"' || q == '\'' {
		end := -1
		for i := 1; i < len(w); i++ {
			if w[i] == '\\' {
				i++
				continue
			}
			if w[i] == q {
				end = i
				break
			}
		}
		if end != len(w)-1 {
			return "", fmt.Errorf("not one quoted word, which nginx refuses")
		}
		return unescape(w[1:end]), nil
	}
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '\\':
			i++
		case ' ', '\t', '\r', '\n', ';', '{', '}', '"', '\'':
			return "", fmt.Errorf("holds %q, which nginx reads as the end of the word unless quoted, and refuses the configuration", w[i])
		}
	}
	return unescape(w), nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"', '\'', '\\':
				i++
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
