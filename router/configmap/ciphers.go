package configmap

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// OpenSSL cipher strings (ssl-ciphers, the ssl-ciphers annotation) as
// nginx's ssl_ciphers hands them to OpenSSL (SSL_CTX_set_cipher_list,
// openssl-ciphers(1)): items separated by ':' (or ',', ';' or ' '), each
// a suite name or an alias, several joined by '+' meaning all of them; an
// item prefixed '!' removes its suites for good, '-' removes them (a later
// item may add them back), '+' moves them to the end; "@STRENGTH" sorts,
// "@SECLEVEL=n" sets OpenSSL's security level, and may follow an item
// without a separator ("RC4+RSA@STRENGTH"). The result is the suites
// Go's crypto/tls has, in the string's order: Go chooses among them by its
// own preference (as nginx's ssl_prefer_server_ciphers on does), so the
// order decides nothing. Suites and aliases OpenSSL has and Go does not
// (DHE, CAMELLIA, ARIA, PSK, CCM, ...) are left out with a note; suites
// ingress-nginx's OpenSSL is built without (RC4, 3DES, ...: absentNames)
// are never served, Go's included, and their names are ignored with a note.

// cipher is one TLS 1.0-1.2 suite Go serves, with the attributes
// OpenSSL's aliases select by.
type cipher struct {
	name string // OpenSSL's name
	id   uint16
	// kx, auth, enc, mac: OpenSSL's kRSA/kECDHE, aRSA/aECDSA,
	// AES128/AES256/CHACHA20 (gcm for AESGCM), SHA1/SHA256/SHA384/AEAD.
	kx, auth, enc, mac string
	gcm                bool
	tls12              bool // a TLSv1.2 suite (OpenSSL's TLSv1.2 alias)
	bits               int  // strength bits (@STRENGTH)
}

// ciphers are the suites, in the order `openssl ciphers -v ALL` lists
// them (OpenSSL 3). Go's RC4 and 3DES suites are not among them:
// ingress-nginx's OpenSSL is built without them (weak suites, absentNames).
var ciphers = []cipher{
	{"ECDHE-ECDSA-AES256-GCM-SHA384", tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "ECDHE", "ECDSA", "AES256", "AEAD", true, true, 256},
	{"ECDHE-RSA-AES256-GCM-SHA384", tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ECDHE", "RSA", "AES256", "AEAD", true, true, 256},
	{"ECDHE-ECDSA-CHACHA20-POLY1305", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE", "ECDSA", "CHACHA20", "AEAD", false, true, 256},
	{"ECDHE-RSA-CHACHA20-POLY1305", tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE", "RSA", "CHACHA20", "AEAD", false, true, 256},
	{"ECDHE-ECDSA-AES128-GCM-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ECDHE", "ECDSA", "AES128", "AEAD", true, true, 128},
	{"ECDHE-RSA-AES128-GCM-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "ECDHE", "RSA", "AES128", "AEAD", true, true, 128},
	{"ECDHE-ECDSA-AES128-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "ECDHE", "ECDSA", "AES128", "SHA256", false, true, 128},
	{"ECDHE-RSA-AES128-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, "ECDHE", "RSA", "AES128", "SHA256", false, true, 128},
	{"ECDHE-ECDSA-AES256-SHA", tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, "ECDHE", "ECDSA", "AES256", "SHA1", false, false, 256},
	{"ECDHE-RSA-AES256-SHA", tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, "ECDHE", "RSA", "AES256", "SHA1", false, false, 256},
	{"ECDHE-ECDSA-AES128-SHA", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, "ECDHE", "ECDSA", "AES128", "SHA1", false, false, 128},
	{"ECDHE-RSA-AES128-SHA", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "ECDHE", "RSA", "AES128", "SHA1", false, false, 128},
	{"AES256-GCM-SHA384", tls.TLS_RSA_WITH_AES_256_GCM_SHA384, "RSA", "RSA", "AES256", "AEAD", true, true, 256},
	{"AES128-GCM-SHA256", tls.TLS_RSA_WITH_AES_128_GCM_SHA256, "RSA", "RSA", "AES128", "AEAD", true, true, 128},
	{"AES128-SHA256", tls.TLS_RSA_WITH_AES_128_CBC_SHA256, "RSA", "RSA", "AES128", "SHA256", false, true, 128},
	{"AES256-SHA", tls.TLS_RSA_WITH_AES_256_CBC_SHA, "RSA", "RSA", "AES256", "SHA1", false, false, 256},
	{"AES128-SHA", tls.TLS_RSA_WITH_AES_128_CBC_SHA, "RSA", "RSA", "AES128", "SHA1", false, false, 128},
}

// aliases select suites by attribute (openssl-ciphers(1), "CIPHER LIST
// FORMAT"). An alias naming only what Go lacks (kDHE, CAMELLIA, PSK, ...)
// is nil; one naming only suites ingress-nginx's OpenSSL is built without
// (absentNames) selects nothing, as there. Every suite Go serves is HIGH.
var aliases = map[string]func(c *cipher) bool{
	"ALL":     func(*cipher) bool { return true },
	"DEFAULT": func(*cipher) bool { return true },
	"HIGH":    func(*cipher) bool { return true },
	"MEDIUM":  none,
	"kRSA":    func(c *cipher) bool { return c.kx == "RSA" },
	"RSA":     func(c *cipher) bool { return c.kx == "RSA" },
	"aRSA":    func(c *cipher) bool { return c.auth == "RSA" },
	"kECDHE":  func(c *cipher) bool { return c.kx == "ECDHE" },
	"kEECDH":  func(c *cipher) bool { return c.kx == "ECDHE" },
	"ECDHE":   func(c *cipher) bool { return c.kx == "ECDHE" },
	"EECDH":   func(c *cipher) bool { return c.kx == "ECDHE" },
	"aECDSA":  func(c *cipher) bool { return c.auth == "ECDSA" },
	"ECDSA":   func(c *cipher) bool { return c.auth == "ECDSA" },
	"AES":     func(c *cipher) bool { return c.enc == "AES128" || c.enc == "AES256" },
	"AES128":  func(c *cipher) bool { return c.enc == "AES128" },
	"AES256":  func(c *cipher) bool { return c.enc == "AES256" },
	"AESGCM":  func(c *cipher) bool { return c.gcm },
	"CHACHA20": func(c *cipher) bool {
		return c.enc == "CHACHA20"
	},
	"3DES":                none,
	"RC4":                 none,
	"SHA1":                func(c *cipher) bool { return c.mac == "SHA1" },
	"SHA":                 func(c *cipher) bool { return c.mac == "SHA1" },
	"SHA256":              func(c *cipher) bool { return c.mac == "SHA256" },
	"SHA384":              func(c *cipher) bool { return c.mac == "SHA384" },
	"TLSv1.2":             func(c *cipher) bool { return c.tls12 },
	"TLSv1.0":             func(c *cipher) bool { return !c.tls12 },
	"TLSv1":               func(c *cipher) bool { return !c.tls12 },
	"SSLv3":               func(c *cipher) bool { return !c.tls12 },
	"ECDH":                func(c *cipher) bool { return c.kx == "ECDHE" },
	"kEDH":                nil,
	"kDHE":                nil,
	"EDH":                 nil,
	"DHE":                 nil,
	"DH":                  nil,
	"ADH":                 nil,
	"AECDH":               nil,
	"aNULL":               nil,
	"eNULL":               nil,
	"NULL":                nil,
	"COMPLEMENTOFDEFAULT": nil,
	"COMPLEMENTOFALL":     nil,
	"LOW":                 none,
	"EXP":                 none,
	"EXPORT":              none,
	"DES":                 none,
	"IDEA":                none,
	"SEED":                none,
	"MD5":                 none,
	"CAMELLIA":            nil,
	"CAMELLIA128":         nil,
	"CAMELLIA256":         nil,
	"ARIA":                nil,
	"ARIA128":             nil,
	"ARIA256":             nil,
	"AESCCM":              nil,
	"AESCCM8":             nil,
	"PSK":                 nil,
	"kPSK":                nil,
	"kECDHEPSK":           nil,
	"kDHEPSK":             nil,
	"kRSAPSK":             nil,
	"aPSK":                nil,
	"SRP":                 nil,
	"kSRP":                nil,
	"DSS":                 nil,
	"aDSS":                nil,
	"GOST":                none,
	"SUITEB128":           nil,
	"SUITEB128ONLY":       nil,
	"SUITEB192":           nil,
}

// none selects no suite.
func none(*cipher) bool { return false }

// opensslOnly are the TLS 1.0-1.2 suites of OpenSSL 3's table (its
// ssl3_ciphers, as `openssl ciphers ALL:COMPLEMENTOFALL` names them, but
// absentNames) that Go's TLS does not have. Names of suites OpenSSL 3
// dropped (EXP-*, DES-CBC-*, RC2) are unknown to it, and nginx ignores
// them as any unknown name.
var opensslOnly = nameSet(opensslOnlyNames)

// nameSet is the set of the colon-separated names in list.
func nameSet(list string) map[string]bool {
	m := make(map[string]bool)
	for n := range strings.SplitSeq(list, ":") {
		m[n] = true
	}
	return m
}

const opensslOnlyNames = "ADH-AES128-GCM-SHA256:ADH-AES128-SHA:ADH-AES128-SHA256:ADH-AES256-GCM-SHA384:" +
	"ADH-AES256-SHA:ADH-AES256-SHA256:ADH-CAMELLIA128-SHA:ADH-CAMELLIA128-SHA256:" +
	"ADH-CAMELLIA256-SHA:ADH-CAMELLIA256-SHA256:AECDH-AES128-SHA:AECDH-AES256-SHA:" +
	"AECDH-NULL-SHA:AES128-CCM:AES128-CCM8:AES256-CCM:AES256-CCM8:AES256-SHA256:" +
	"ARIA128-GCM-SHA256:ARIA256-GCM-SHA384:CAMELLIA128-SHA:CAMELLIA128-SHA256:" +
	"CAMELLIA256-SHA:CAMELLIA256-SHA256:DHE-DSS-AES128-GCM-SHA256:DHE-DSS-AES128-SHA:" +
	"DHE-DSS-AES128-SHA256:DHE-DSS-AES256-GCM-SHA384:DHE-DSS-AES256-SHA:" +
	"DHE-DSS-AES256-SHA256:DHE-DSS-ARIA128-GCM-SHA256:DHE-DSS-ARIA256-GCM-SHA384:" +
	"DHE-DSS-CAMELLIA128-SHA:DHE-DSS-CAMELLIA128-SHA256:DHE-DSS-CAMELLIA256-SHA:" +
	"DHE-DSS-CAMELLIA256-SHA256:DHE-PSK-AES128-CBC-SHA:DHE-PSK-AES128-CBC-SHA256:" +
	"DHE-PSK-AES128-CCM:DHE-PSK-AES128-CCM8:DHE-PSK-AES128-GCM-SHA256:DHE-PSK-AES256-CBC-SHA:" +
	"DHE-PSK-AES256-CBC-SHA384:DHE-PSK-AES256-CCM:DHE-PSK-AES256-CCM8:" +
	"DHE-PSK-AES256-GCM-SHA384:DHE-PSK-ARIA128-GCM-SHA256:DHE-PSK-ARIA256-GCM-SHA384:" +
	"DHE-PSK-CAMELLIA128-SHA256:DHE-PSK-CAMELLIA256-SHA384:DHE-PSK-CHACHA20-POLY1305:" +
	"DHE-PSK-NULL-SHA:DHE-PSK-NULL-SHA256:DHE-PSK-NULL-SHA384:DHE-RSA-AES128-CCM:" +
	"DHE-RSA-AES128-CCM8:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-SHA:DHE-RSA-AES128-SHA256:" +
	"DHE-RSA-AES256-CCM:DHE-RSA-AES256-CCM8:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES256-SHA:" +
	"DHE-RSA-AES256-SHA256:DHE-RSA-ARIA128-GCM-SHA256:DHE-RSA-ARIA256-GCM-SHA384:" +
	"DHE-RSA-CAMELLIA128-SHA:DHE-RSA-CAMELLIA128-SHA256:DHE-RSA-CAMELLIA256-SHA:" +
	"DHE-RSA-CAMELLIA256-SHA256:DHE-RSA-CHACHA20-POLY1305:ECDHE-ARIA128-GCM-SHA256:" +
	"ECDHE-ARIA256-GCM-SHA384:ECDHE-ECDSA-AES128-CCM:ECDHE-ECDSA-AES128-CCM8:" +
	"ECDHE-ECDSA-AES256-CCM:ECDHE-ECDSA-AES256-CCM8:ECDHE-ECDSA-AES256-SHA384:" +
	"ECDHE-ECDSA-ARIA128-GCM-SHA256:ECDHE-ECDSA-ARIA256-GCM-SHA384:" +
	"ECDHE-ECDSA-CAMELLIA128-SHA256:ECDHE-ECDSA-CAMELLIA256-SHA384:ECDHE-ECDSA-NULL-SHA:" +
	"ECDHE-PSK-AES128-CBC-SHA:ECDHE-PSK-AES128-CBC-SHA256:ECDHE-PSK-AES256-CBC-SHA:" +
	"ECDHE-PSK-AES256-CBC-SHA384:ECDHE-PSK-CAMELLIA128-SHA256:ECDHE-PSK-CAMELLIA256-SHA384:" +
	"ECDHE-PSK-CHACHA20-POLY1305:ECDHE-PSK-NULL-SHA:ECDHE-PSK-NULL-SHA256:" +
	"ECDHE-PSK-NULL-SHA384:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-CAMELLIA128-SHA256:" +
	"ECDHE-RSA-CAMELLIA256-SHA384:ECDHE-RSA-NULL-SHA:NULL-MD5:NULL-SHA:NULL-SHA256:" +
	"PSK-AES128-CBC-SHA:PSK-AES128-CBC-SHA256:PSK-AES128-CCM:PSK-AES128-CCM8:" +
	"PSK-AES128-GCM-SHA256:PSK-AES256-CBC-SHA:PSK-AES256-CBC-SHA384:PSK-AES256-CCM:" +
	"PSK-AES256-CCM8:PSK-AES256-GCM-SHA384:PSK-ARIA128-GCM-SHA256:PSK-ARIA256-GCM-SHA384:" +
	"PSK-CAMELLIA128-SHA256:PSK-CAMELLIA256-SHA384:PSK-CHACHA20-POLY1305:PSK-NULL-SHA:" +
	"PSK-NULL-SHA256:PSK-NULL-SHA384:RSA-PSK-AES128-CBC-SHA:RSA-PSK-AES128-CBC-SHA256:" +
	"RSA-PSK-AES128-GCM-SHA256:RSA-PSK-AES256-CBC-SHA:RSA-PSK-AES256-CBC-SHA384:" +
	"RSA-PSK-AES256-GCM-SHA384:RSA-PSK-ARIA128-GCM-SHA256:RSA-PSK-ARIA256-GCM-SHA384:" +
	"RSA-PSK-CAMELLIA128-SHA256:RSA-PSK-CAMELLIA256-SHA384:RSA-PSK-CHACHA20-POLY1305:" +
	"RSA-PSK-NULL-SHA:RSA-PSK-NULL-SHA256:RSA-PSK-NULL-SHA384:SRP-AES-128-CBC-SHA:" +
	"SRP-AES-256-CBC-SHA:SRP-DSS-AES-128-CBC-SHA:SRP-DSS-AES-256-CBC-SHA:" +
	"SRP-RSA-AES-128-CBC-SHA:SRP-RSA-AES-256-CBC-SHA"

// absentNames are the suites ingress-nginx's OpenSSL (Alpine's OpenSSL 3,
// built without weak suites, IDEA and SEED, and without a GOST engine)
// does not have, Go's RC4 and 3DES suites among them: nginx ignores their
// names as unknown, so they are never served.
var absentNames = nameSet(absentNameList)

const absentNameList = "ADH-DES-CBC3-SHA:ADH-RC4-MD5:ADH-SEED-SHA:AECDH-DES-CBC3-SHA:AECDH-RC4-SHA:DES-CBC3-SHA:" +
	"DHE-DSS-DES-CBC3-SHA:DHE-DSS-SEED-SHA:DHE-PSK-3DES-EDE-CBC-SHA:DHE-PSK-RC4-SHA:" +
	"DHE-RSA-DES-CBC3-SHA:DHE-RSA-SEED-SHA:ECDHE-ECDSA-DES-CBC3-SHA:ECDHE-ECDSA-RC4-SHA:" +
	"ECDHE-PSK-3DES-EDE-CBC-SHA:ECDHE-PSK-RC4-SHA:ECDHE-RSA-DES-CBC3-SHA:ECDHE-RSA-RC4-SHA:" +
	"EDH-DSS-DES-CBC3-SHA:EDH-RSA-DES-CBC3-SHA:GOST2001-GOST89-GOST89:GOST2001-NULL-GOST94:" +
	"GOST2012-GOST8912-GOST8912:GOST2012-KUZNYECHIK-KUZNYECHIKOMAC:GOST2012-MAGMA-MAGMAOMAC:" +
	"GOST2012-NULL-GOST12:IANA-GOST2012-GOST8912-GOST8912:IDEA-CBC-SHA:" +
	"LEGACY-GOST2012-GOST8912-GOST8912:PSK-3DES-EDE-CBC-SHA:PSK-RC4-SHA:RC4-MD5:RC4-SHA:" +
	"RSA-PSK-3DES-EDE-CBC-SHA:RSA-PSK-RC4-SHA:SEED-SHA:SRP-3DES-EDE-CBC-SHA:" +
	"SRP-DSS-3DES-EDE-CBC-SHA:SRP-RSA-3DES-EDE-CBC-SHA"

// tls13Suite reports OpenSSL's TLSv1.3 suite names, which ssl_ciphers
// (SSL_CTX_set_cipher_list) does not set and ignores; Go's TLS 1.3 suites
// are not configurable.
func tls13Suite(name string) bool {
	switch name {
	case "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256":
		return true
	}
	return false
}

// ParseCiphers reads an OpenSSL cipher string. notes name what Go cannot
// serve and what is served instead; an error means no suite is left (nginx
// refuses such a configuration: "no cipher match") or the string is not
// OpenSSL's syntax.
func ParseCiphers(v string) (suites []uint16, notes []string, err error) {
	suites, notes, _, err = parseCiphers(v)
	return suites, notes, err
}

// parseCiphers is ParseCiphers that also reports the security level the
// string sets (its last @SECLEVEL), -1 for none.
func parseCiphers(v string) (suites []uint16, notes []string, secLevel int, err error) {
	secLevel = -1
	if strings.TrimSpace(v) == "" {
		return nil, nil, secLevel, errors.New("want an OpenSSL cipher list")
	}
	// order is the working list, as OpenSSL keeps it: every suite, each
	// active or not; banned suites are gone for good.
	order := make([]int, len(ciphers))
	for i := range order {
		order[i] = i
	}
	active := make([]bool, len(ciphers))
	banned := make([]bool, len(ciphers))
	var lacking, absent, unknown, tls13 []string
	for l := 0; l < len(v); {
		op, item, next, err := nextItem(v, l)
		if err != nil {
			return nil, notes, secLevel, err
		}
		l = next
		switch {
		case item == "":
			continue // a separator
		case op == '@':
			switch {
			case item == "STRENGTH":
				slices.SortStableFunc(order, func(a, b int) int { return ciphers[b].bits - ciphers[a].bits })
			case len(item) == len("SECLEVEL=0") && strings.HasPrefix(item, "SECLEVEL=") && item[9] >= '0' && item[9] <= '5':
				// Level 0 limits nothing, as Go; a higher one refuses
				// TLS 1.0 and 1.1 (ssl-protocols), and more Go does not.
				secLevel = int(item[9] - '0')
				if secLevel > 0 {
					notes = append(notes, "@"+item+" has no effect: Go's TLS has no security levels")
				}
			default:
				return nil, notes, secLevel, fmt.Errorf("@%s is not an OpenSSL command (@STRENGTH, @SECLEVEL=0 to 5): nginx refuses the list", item)
			}
			// OpenSSL takes one command and drops the rest of the item.
			l = itemEnd(v, l)
			continue
		}
		if absentNames[item] {
			// Unknown to ingress-nginx's OpenSSL: the rest is skipped.
			if op == 0 {
				absent = append(absent, item)
			}
			l = itemEnd(v, l)
			continue
		}
		sel, ok, missing := selector(item)
		if !ok && !missing {
			// OpenSSL skips the rest of an item it does not know.
			l = itemEnd(v, l)
		}
		switch {
		case (missing || !ok) && op != 0:
			continue // '!', '-' and '+' add nothing: nothing to say
		case missing:
			lacking = append(lacking, item)
			continue
		case tls13Suite(item):
			tls13 = append(tls13, item)
			continue
		case !ok:
			unknown = append(unknown, item)
			continue
		}
		var picked []int
		for _, i := range order {
			if sel(&ciphers[i]) {
				picked = append(picked, i)
			}
		}
		switch op {
		case '!':
			for _, i := range picked {
				banned[i], active[i] = true, false
			}
		case '-':
			for _, i := range picked {
				active[i] = false
			}
		case '+':
			order = moveToEnd(order, picked, func(i int) bool { return active[i] })
		default:
			order = moveToEnd(order, picked, func(i int) bool { return !active[i] && !banned[i] })
			for _, i := range picked {
				active[i] = active[i] || !banned[i]
			}
		}
	}
	if len(lacking) > 0 {
		notes = append(notes, strings.Join(lacking, ":")+" left out: Go's TLS has no such cipher suite")
	}
	if len(absent) > 0 {
		notes = append(notes, strings.Join(absent, ":")+" ignored: ingress-nginx's OpenSSL has no such suite either (built without RC4, 3DES, IDEA, SEED and GOST suites)")
	}
	if len(tls13) > 0 {
		notes = append(notes, strings.Join(tls13, ":")+" ignored: a TLSv1.3 suite, which ssl-ciphers does not set (Go's TLS 1.3 suites are fixed)")
	}
	if len(unknown) > 0 {
		notes = append(notes, strings.Join(unknown, ":")+" ignored: not a cipher or alias OpenSSL knows")
	}
	for _, i := range order {
		if active[i] {
			suites = append(suites, ciphers[i].id)
		}
	}
	if len(suites) == 0 {
		return nil, notes, secLevel, errors.New("no cipher suite Go serves is left (nginx: no cipher match)")
	}
	return suites, notes, secLevel, nil
}

// nextItem reads the item of the cipher string v at l as OpenSSL's
// ssl_cipher_process_rulestr does: a separator (':', ',', ';', a space),
// else an optional op ('!', '-', '+', '@') and names of letters, digits,
// '-', '_', '.' and '=' joined by '+' (an '@' command has one). The item
// ends where its names end, so "RC4+RSA@STRENGTH" is "RC4+RSA" and then
// "@STRENGTH". An op or '+' with no name after it is an error, as OpenSSL's
// invalid command. next is where the following item starts.
func nextItem(v string, l int) (op byte, item string, next int, err error) {
	if isItemSep(v[l]) {
		return 0, "", l + 1, nil
	}
	switch v[l] {
	case '!', '-', '+', '@':
		op = v[l]
		l++
	}
	start := l
	for {
		n := l
		for l < len(v) && isNameByte(v[l]) {
			l++
		}
		if l == n {
			return 0, "", 0, fmt.Errorf("no cipher or alias at byte %d of %q: nginx refuses the list", l, v)
		}
		if op == '@' || l == len(v) || v[l] != '+' {
			return op, v[start:l], l, nil
		}
		l++
	}
}

// itemEnd is where the item around l ends: the next separator.
func itemEnd(v string, l int) int {
	for l < len(v) && !isItemSep(v[l]) {
		l++
	}
	return l
}

// isItemSep is OpenSSL's ITEM_SEP, with any ASCII space.
func isItemSep(c byte) bool {
	return c == ':' || c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isNameByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '='
}

// moveToEnd moves the suites of picked for which move holds to the end of
// order, keeping their order.
func moveToEnd(order, picked []int, move func(int) bool) []int {
	var tail []int
	for _, i := range picked {
		if move(i) {
			tail = append(tail, i)
		}
	}
	if len(tail) == 0 {
		return order
	}
	out := slices.DeleteFunc(slices.Clone(order), func(i int) bool { return slices.Contains(tail, i) })
	return append(out, tail...)
}

// selector returns what an item selects: a suite's name, or aliases joined
// by '+'. missing: the item names only what Go lacks; !ok: unknown.
func selector(item string) (sel func(*cipher) bool, ok, missing bool) {
	for i := range ciphers {
		if ciphers[i].name == item {
			id := ciphers[i].id
			return func(c *cipher) bool { return c.id == id }, true, false
		}
	}
	if opensslOnly[item] {
		return nil, false, true
	}
	var parts []func(*cipher) bool
	for part := range strings.SplitSeq(item, "+") {
		f, known := aliases[part]
		switch {
		case !known:
			return nil, false, false
		case f == nil:
			return nil, false, true
		}
		parts = append(parts, f)
	}
	return func(c *cipher) bool {
		for _, f := range parts {
			if !f(c) {
				return false
			}
		}
		return true
	}, true, false
}

// CipherName is OpenSSL's name of a Go suite ("" for one it is not).
func CipherName(id uint16) string {
	for i := range ciphers {
		if ciphers[i].id == id {
			return ciphers[i].name
		}
	}
	return ""
}
