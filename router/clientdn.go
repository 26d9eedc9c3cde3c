package router

import (
	"encoding/asn1"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// opensslDN renders a DER-encoded X.509 Name as nginx's $ssl_client_s_dn
// and $ssl_client_i_dn do: OpenSSL's X509_NAME_print_ex with
// XN_FLAG_RFC2253. Every attribute is kept, in the reverse of the
// encoded order (within a multi-valued RDN too), "," between RDNs and "+"
// within one, under OpenSSL's short names; an attribute type OpenSSL does
// not name is written as its dotted OID and its value as "#" and the hex
// of its DER, as is a value that is not a string. Values are UTF-8 with
// ,+"\<>; escaped by a backslash, a leading space or '#' and a trailing
// space too, and control characters and every byte of a non-ASCII
// character as \XX. crypto/x509's Name keeps only some attributes, in an
// order of its own, so the raw Name is read; "" when it does not parse
// (never for one crypto/x509 parsed).
func opensslDN(raw []byte) string {
	var rdns []dnAttributeSET
	if rest, err := asn1.Unmarshal(raw, &rdns); err != nil || len(rest) > 0 {
		return ""
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		for j := len(rdns[i]) - 1; j >= 0; j-- {
			switch {
			case j < len(rdns[i])-1:
				b.WriteByte('+')
			case i < len(rdns)-1:
				b.WriteByte(',')
			}
			writeDNAttribute(&b, &rdns[i][j])
		}
	}
	return b.String()
}

// dnAttributeSET is one RDN: a SET of attributes, by its type's name.
type dnAttributeSET []dnAttribute

type dnAttribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

func writeDNAttribute(b *strings.Builder, a *dnAttribute) {
	name, known := dnAttributeNames[a.Type.String()]
	if !known {
		b.WriteString(a.Type.String())
		b.WriteByte('=')
		writeDNDump(b, a.Value.FullBytes)
		return
	}
	b.WriteString(name)
	b.WriteByte('=')
	v := a.Value
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		writeDNDump(b, v.FullBytes)
		return
	}
	// OpenSSL's character width per string type: a UTF8String's bytes
	// are taken as they are, a one-byte type's as Latin-1.
	var text []byte
	switch v.Tag {
	case asn1.TagUTF8String:
		text = v.Bytes
	case asn1.TagNumericString, asn1.TagPrintableString, asn1.TagT61String, asn1.TagIA5String,
		asn1.TagUTCTime, asn1.TagGeneralizedTime, 26: // VisibleString
		for _, c := range v.Bytes {
			text = utf8.AppendRune(text, rune(c))
		}
	case 30: // BMPString
		if len(v.Bytes)%2 != 0 {
			writeDNDump(b, v.FullBytes)
			return
		}
		for p := v.Bytes; len(p) > 0; p = p[2:] {
			text = utf8.AppendRune(text, rune(binary.BigEndian.Uint16(p)))
		}
	case 28: // UniversalString
		if len(v.Bytes)%4 != 0 {
			writeDNDump(b, v.FullBytes)
			return
		}
		for p := v.Bytes; len(p) > 0; p = p[4:] {
			text = utf8.AppendRune(text, rune(binary.BigEndian.Uint32(p)))
		}
	default:
		writeDNDump(b, v.FullBytes)
		return
	}
	writeDNValue(b, text)
}

func writeDNDump(b *strings.Builder, der []byte) {
	b.WriteByte('#')
	b.WriteString(strings.ToUpper(hex.EncodeToString(der)))
}

// writeDNValue escapes text as ASN1_STRFLGS_RFC2253 does.
func writeDNValue(b *strings.Builder, text []byte) {
	const hexDigits = "0123456789ABCDEF"
	for i, c := range text {
		switch {
		case c < 0x20 || c >= 0x7f:
			b.WriteByte('\\')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			continue
		case strings.IndexByte(`,+"\<>;`, c) >= 0,
			c == ' ' && (i == 0 || i == len(text)-1),
			c == '#' && i == 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}

// dnAttributeNames are OpenSSL's short names of the attribute types
// found in certificate subjects (objects.txt).
var dnAttributeNames = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.4":                    "SN",
	"2.5.4.5":                    "serialNumber",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "street",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "title",
	"2.5.4.13":                   "description",
	"2.5.4.15":                   "businessCategory",
	"2.5.4.16":                   "postalAddress",
	"2.5.4.17":                   "postalCode",
	"2.5.4.18":                   "postOfficeBox",
	"2.5.4.19":                   "physicalDeliveryOfficeName",
	"2.5.4.20":                   "telephoneNumber",
	"2.5.4.41":                   "name",
	"2.5.4.42":                   "GN",
	"2.5.4.43":                   "initials",
	"2.5.4.44":                   "generationQualifier",
	"2.5.4.45":                   "x500UniqueIdentifier",
	"2.5.4.46":                   "dnQualifier",
	"2.5.4.51":                   "houseIdentifier",
	"2.5.4.54":                   "dmdName",
	"2.5.4.65":                   "pseudonym",
	"2.5.4.72":                   "role",
	"2.5.4.97":                   "organizationIdentifier",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.3":  "mail",
	"0.9.2342.19200300.100.1.25": "DC",
	"1.2.840.113549.1.9.1":       "emailAddress",
	"1.2.840.113549.1.9.2":       "unstructuredName",
	"1.2.840.113549.1.9.8":       "unstructuredAddress",
	"1.3.6.1.4.1.311.60.2.1.1":   "jurisdictionL",
	"1.3.6.1.4.1.311.60.2.1.2":   "jurisdictionST",
	"1.3.6.1.4.1.311.60.2.1.3":   "jurisdictionC",
}
