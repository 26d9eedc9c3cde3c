package htpasswd

import (
	"crypto/md5"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func ha1(user, realm, password string) string {
	sum := md5.Sum([]byte(user + ":" + realm + ":" + password))
	return hex.EncodeToString(sum[:])
}

func TestParseHtdigest(t *testing.T) {
	alice := ha1("alice", "private", "wonderland")
	file := "# comment\n" +
		"alice:private:" + alice + "\r\n" +
		"alice:private:" + ha1("alice", "private", "later") + "\n" +
		"alice:other:" + ha1("alice", "other", "x") + "\n" +
		"\n" +
		"bob:private:" + "0123456789ABCDEF0123456789ABCDEF" + "\n" +
		"carol:private:" + alice + ":comment\n" +
		"dave#:private:" + alice + "\n" +
		"erin:pri#vate:" + alice + "\n" +
		"frank:" + alice + "\n"
	d, problems := ParseHtdigest([]byte(file))
	require.Equal(t, 2, d.Len())
	got, ok := d.Lookup("alice", "private")
	require.True(t, ok)
	require.Equal(t, alice, got, "the first line of a user and realm wins")
	_, ok = d.Lookup("alice", "other")
	require.True(t, ok, "a user may have one entry per realm")
	_, ok = d.Lookup("alice", "Private")
	require.False(t, ok, "realms match byte for byte")
	var lines []int
	for _, p := range problems {
		lines = append(lines, p.Line)
		require.NotContains(t, p.String(), alice, "a problem never shows a hash")
	}
	require.Equal(t, []int{6, 7, 8, 9, 10}, lines)

	again, _ := ParseHtdigest([]byte(file))
	require.Equal(t, d.Digest(), again.Digest())
	other, _ := ParseHtdigest([]byte("alice:private:" + ha1("alice", "private", "x") + "\n"))
	require.NotEqual(t, d.Digest(), other.Digest())
	var none *Digests
	_, ok = none.Lookup("alice", "private")
	require.False(t, ok)
	require.Zero(t, none.Len())
}

func TestParseHtdigestMap(t *testing.T) {
	d, problems := ParseHtdigestMap(map[string][]byte{
		"alice":   []byte("private:" + ha1("alice", "private", "wonderland") + "\n"),
		"bob":     []byte("private"),
		"bad:key": []byte("private:" + ha1("x", "private", "y")),
	})
	require.Equal(t, 1, d.Len())
	_, ok := d.Lookup("alice", "private")
	require.True(t, ok)
	require.Len(t, problems, 2)
}
