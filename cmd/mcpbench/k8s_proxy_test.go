package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A proxy password written out (--proxy, or a profile's proxy:) is
// refused by k8s-job as every other literal secret is, and never printed;
// a proxy without credentials, or with the password as ${NAME}, goes into
// the manifest as given.
func TestK8sJobRefusesProxyPassword(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(profile, []byte("name: p\nproxy: http://u:PROFPASS9@proxy:3128\nops:\n  - {method: tools/call, tool: echo, arguments: {text: hi}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"k8s-job", "--parallelism", "2", "--image", "img", "--url", "http://svc/mcp"}
	for _, tt := range []struct {
		args   []string
		refuse bool
	}{
		{[]string{"--proxy", "http://u:PXPASS7@proxy:3128"}, true},
		{[]string{"--profile", profile}, true},
		{[]string{"--proxy", "http://proxy:3128"}, false},
		{[]string{"--proxy", "http://u:${PROXY_PASSWORD}@proxy:3128"}, false},
	} {
		out, errs, code := run(t, append(base, tt.args...)...)
		if strings.Contains(out+errs, "PXPASS7") || strings.Contains(out+errs, "PROFPASS9") {
			t.Errorf("%v: the proxy password is in the output", tt.args)
		}
		if !tt.refuse {
			if code != exitOK || !strings.Contains(out, "kind: Job") || !strings.Contains(out, tt.args[1]) {
				t.Errorf("%v: exit %d, %q: want a manifest with the proxy as given\n%s", tt.args, code, errs, out)
			}
			continue
		}
		if code != exitUsage || out != "" || !strings.Contains(errs, "carries a literal password") || !strings.Contains(errs, "--env-from-secret") {
			t.Errorf("%v: exit %d, %q, %d bytes out: want exit 2 naming the proxy and --env-from-secret, and no manifest", tt.args, code, errs, len(out))
		}
	}
}
