package router

import (
	"encoding/asn1"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testATV struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

type testATVSET []testATV

func dnString(tag int, s string) asn1.RawValue { return asn1.RawValue{Tag: tag, Bytes: []byte(s)} }

// TestOpenSSLDN: Names rendered as nginx's $ssl_client_s_dn renders them;
// each want is what "openssl x509 -noout -subject -nameopt RFC2253"
// (OpenSSL 3.0) printed for a certificate with that subject.
func TestOpenSSLDN(t *testing.T) {
	oid := func(ids ...int) asn1.ObjectIdentifier { return ids }
	cn, o, ou, l := oid(2, 5, 4, 3), oid(2, 5, 4, 10), oid(2, 5, 4, 11), oid(2, 5, 4, 7)
	for _, tt := range []struct {
		name string
		rdns []testATVSET
		want string
	}{
		{"escapes", []testATVSET{
			{{cn, dnString(asn1.TagUTF8String, "a\\b=c#d \x01e\x7f,+\"<>;")}},
			{{cn, dnString(asn1.TagPrintableString, "#lead")}},
			{{l, dnString(asn1.TagUTF8String, "  x  ")}},
			{{cn, dnString(asn1.TagUTF8String, " ")}},
			{{cn, dnString(asn1.TagUTF8String, "")}},
		}, `CN=,CN=\ ,L=\  x \ ,CN=\#lead,CN=a\\b=c#d \01e\7F\,\+\"\<\>\;`},
		{"string types", []testATVSET{
			{{o, dnString(asn1.TagT61String, "T\xe9l")}},
			{{ou, dnString(30, "\x00A\x00\xe9\x20\xac")}},
			{{l, dnString(28, "\x00\x00\x00B\x00\x01\xf6\x00")}},
			{{cn, dnString(asn1.TagUTF8String, "Zoë")}},
		}, `CN=Zo\C3\AB,L=B\F0\9F\98\80,OU=A\C3\A9\E2\82\AC,O=T\C3\A9l`},
		{"dumped", []testATVSET{
			{{oid(1, 2, 3, 4), dnString(asn1.TagUTF8String, "custom")}},
			{{cn, asn1.RawValue{Tag: asn1.TagBitString, Bytes: []byte{0, 2}}}},
		}, `CN=#03020002,1.2.3.4=#0C06637573746F6D`},
		{"names and multi-valued RDNs", []testATVSET{
			{{oid(0, 9, 2342, 19200300, 100, 1, 25), dnString(asn1.TagIA5String, "com")}},
			{{oid(1, 2, 840, 113549, 1, 9, 1), dnString(asn1.TagIA5String, "a@b")}, {oid(0, 9, 2342, 19200300, 100, 1, 25), dnString(asn1.TagIA5String, "dc")}},
			{{oid(2, 5, 4, 46), dnString(asn1.TagPrintableString, "q")}, {oid(2, 5, 4, 65), dnString(asn1.TagUTF8String, "p")},
				{oid(2, 5, 4, 97), dnString(asn1.TagUTF8String, "VAT")}, {oid(0, 9, 2342, 19200300, 100, 1, 1), dnString(asn1.TagUTF8String, "uid")}},
			{{oid(2, 5, 4, 5), dnString(asn1.TagPrintableString, "a")}},
			{{oid(2, 5, 4, 9), dnString(asn1.TagUTF8String, "a")}},
			{{oid(2, 5, 4, 17), dnString(asn1.TagUTF8String, "a")}},
			{{oid(2, 5, 4, 4), dnString(asn1.TagUTF8String, "a")}},
			{{oid(2, 5, 4, 42), dnString(asn1.TagUTF8String, "a")}},
			{{oid(1, 3, 6, 1, 4, 1, 311, 60, 2, 1, 3), dnString(asn1.TagPrintableString, "US")}},
			{{oid(2, 5, 4, 87), dnString(asn1.TagUTF8String, "a")}},
			{{oid(0, 9, 2342, 19200300, 100, 1, 3), dnString(asn1.TagIA5String, "a")}},
		}, `mail=a,2.5.4.87=#0C0161,jurisdictionC=US,GN=a,SN=a,postalCode=a,street=a,serialNumber=a,` +
			`UID=uid+organizationIdentifier=VAT+pseudonym=p+dnQualifier=q,DC=dc+emailAddress=a@b,DC=com`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := asn1.Marshal(tt.rdns)
			require.NoError(t, err)
			assert.Equal(t, tt.want, opensslDN(raw))
		})
	}
	assert.Empty(t, opensslDN([]byte{0x30, 0x03}), "not a Name")
}
