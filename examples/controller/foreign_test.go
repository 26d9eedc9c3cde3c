package main

import (
	"flag"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// testFlags stands for the controller's flag set: two string flags and a
// boolean one.
func testFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.String("ingress-class", "", "")
	fs.String("watch-namespace", "", "")
	fs.Bool("ssl-redirect", true, "")
	return fs
}

func TestForeignFlags(t *testing.T) {
	fs := testFlags()
	tests := []struct {
		name     string
		args     []string
		wantRest []string
		wantNoop []string
		wantErr  string
	}{
		{name: "ours only", args: []string{"--ingress-class", "nginx", "-ssl-redirect=false", "--watch-namespace=a"}, wantRest: []string{"--ingress-class", "nginx", "-ssl-redirect=false", "--watch-namespace=a"}},
		{name: "a value that looks like a flag is a value", args: []string{"--ingress-class", "--maxmind-license-key"}, wantRest: []string{"--ingress-class", "--maxmind-license-key"}},
		{name: "after the terminator", args: []string{"--", "--maxmind-license-key=x"}, wantRest: []string{"--", "--maxmind-license-key=x"}},
		{name: "after a positional argument", args: []string{"extra", "--maxmind-license-key=x"}, wantRest: []string{"extra", "--maxmind-license-key=x"}},
		{name: "help", args: []string{"--help", "--maxmind-license-key=x"}, wantRest: []string{"--help", "--maxmind-license-key=x"}},
		{name: "default-valued no-ops dropped", args: []string{"--profiling=false", "-ingress-class=x", "--logtostderr", "--profiling=0"}, wantRest: []string{"-ingress-class=x"}, wantNoop: []string{"profiling", "logtostderr"}},
		{name: "Sync Events off is what ramjet does", args: []string{"--disable-sync-events", "-ingress-class=x", "--disable-sync-events=true"}, wantRest: []string{"-ingress-class=x"}, wantNoop: []string{"disable-sync-events"}},
		{name: "Sync Events on are not posted", args: []string{"--disable-sync-events=false"}, wantErr: "--disable-sync-events=false is an ingress-nginx flag ramjet does not implement: ramjet posts no Sync Events"},
		{name: "deep inspection on is what ramjet does", args: []string{"--deep-inspect", "-ingress-class=x", "--deep-inspect=true"}, wantRest: []string{"-ingress-class=x"}, wantNoop: []string{"deep-inspect"}},
		{name: "deep inspection cannot be turned off", args: []string{"--deep-inspect=false"}, wantErr: "--deep-inspect=false is an ingress-nginx flag ramjet does not implement: ramjet always withholds"},
		{name: "annotation validation on and the full test are what ramjet does", args: []string{"--enable-annotation-validation=true", "--disable-full-test=false", "--enable-annotation-validation"}, wantRest: []string{}, wantNoop: []string{"enable-annotation-validation", "disable-full-test"}},
		{name: "annotation validation cannot be turned off", args: []string{"--enable-annotation-validation=false"}, wantErr: "ramjet always validates annotations"},
		{name: "maxmind-license-key", args: []string{"--maxmind-license-key=secret"}, wantErr: "ramjet has no GeoIP"},
		{name: "maxmind-license-key, value apart", args: []string{"--maxmind-license-key", "secret"}, wantErr: "--maxmind-license-key is an ingress-nginx flag ramjet does not implement"},
		{name: "full test", args: []string{"--disable-full-test"}, wantErr: "never runs nginx -t"},
		{name: "profiling on", args: []string{"--profiling"}, wantErr: "ramjet serves no pprof"},
		{name: "native histograms", args: []string{"--bucket-factor=1.1"}, wantErr: "classic histograms only"},
		{name: "ingress-nginx's metrics defaults are what ramjet does", args: []string{"--bucket-factor=0", "--max-buckets", "100", "--monitor-max-batch-size=10000", "-ingress-class=x"},
			wantRest: []string{"-ingress-class=x"}, wantNoop: []string{"bucket-factor", "max-buckets", "monitor-max-batch-size"}},
		{name: "ingress-nginx's annotation prefix is what ramjet reads", args: []string{"--annotations-prefix=nginx.ingress.kubernetes.io", "--annotations-prefix", "nginx.ingress.kubernetes.io", "-ingress-class=x"},
			wantRest: []string{"-ingress-class=x"}, wantNoop: []string{"annotations-prefix"}},
		{name: "another annotation prefix", args: []string{"--annotations-prefix=ingress.example.com"}, wantErr: "ramjet reads the nginx.ingress.kubernetes.io/ annotations"},
		{name: "a bad metrics value", args: []string{"--monitor-max-batch-size=lots"}, wantErr: "without batches"},
		{name: "no-op flag with a bad value", args: []string{"--disable-leader-election=maybe"}, wantErr: "every replica serves"},
		{name: "klog's other flags", args: []string{"--vmodule=nginx=3"}, wantErr: "set RAMJET_LOG"},
		{name: "http port", args: []string{"--http-port=80"}, wantErr: "use --http-addr=:PORT"},
		{name: "healthz port", args: []string{"--healthz-port", "10254"}, wantErr: "use --debug-addr"},
		{name: "unknown", args: []string{"-nope=1"}, wantErr: "unknown flag -nope=1 (controller -h lists the flags)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, noop, err := foreignFlags(fs, tt.args)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, errUsage)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.wantRest, rest); diff != "" {
				t.Errorf("rest (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNoop, noop); diff != "" {
				t.Errorf("noop (-want +got):\n%s", diff)
			}
		})
	}
}

// Every listed ingress-nginx flag stops the process when given a value
// ramjet does not already honour, naming itself with advice (a flag the
// controller defines would parse instead).
func TestIngressNginxFlagsAreRefused(t *testing.T) {
	for name, advice := range ingressNginxFlags {
		require.NotEmpty(t, advice, name)
		arg := "--" + name + "=x"
		if want, ok := ingressNginxNoop[name]; ok {
			arg = "--" + name + "=" + map[bool]string{true: "false", false: "true"}[want]
		}
		_, err := parseFlags([]string{arg}, io.Discard, func(string) string { return "" })
		require.ErrorIs(t, err, errUsage, arg)
		require.ErrorContains(t, err, arg+" is an ingress-nginx flag ramjet does not implement: "+advice)
	}
	for name := range ingressNginxNoop {
		require.Contains(t, ingressNginxFlags, name, "a no-op flag needs advice for its other value")
	}
}

// Every flag ramjet does not take is named in one run, with its advice,
// not the first alone; a separate value is not taken for a flag.
func TestForeignFlagsAllAtOnce(t *testing.T) {
	_, _, err := foreignFlags(testFlags(), []string{
		"--ingress-class", "nginx",
		"--maxmind-license-key", "abc",
		"--vmodule=x=2",
		"--nope",
		"--profiling",
		"--watch-namespace=a",
	})
	require.ErrorIs(t, err, errUsage)
	require.Equal(t, "usage: 4 flags to fix:\n"+
		"  --maxmind-license-key is an ingress-nginx flag ramjet does not implement: "+adviceMaxmind+"\n"+
		"  --vmodule=x=2 is an ingress-nginx flag ramjet does not implement: "+adviceLogging+"\n"+
		"  unknown flag --nope (controller -h lists the flags)\n"+
		"  --profiling is an ingress-nginx flag ramjet does not implement: "+adviceProfiler, err.Error())
}
