package libp2ptls_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// A user's project depends on the package by its import path, not from
// inside this module: a separate module (with a replace directive to this
// checkout, as a fork or vendored copy would have) builds a go-libp2p host on
// the transport, pure Go with cgo off and with the OpenSSL backend.
func TestBuildsInAnotherModule(t *testing.T) {
	if testing.Short() || libp2ptls.OpenSSLCompiledIn {
		// Once per make test is enough: the pure build's run builds both.
		t.Skip("builds a separate module; runs in the pure-Go test build")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/user\n\ngo 1.26.0\n\n" +
			"require (\n\tgithub.com/libp2p/go-libp2p " + requiredVersion(t, root, "github.com/libp2p/go-libp2p") + "\n" +
			"\tgithub.com/tlsmatrix/tlsmatrix/go v0.0.0\n)\n\n" +
			"replace github.com/tlsmatrix/tlsmatrix/go => " + root + "\n",
		"go.sum": string(sum),
		"main.go": `package main

import (
	"fmt"

	"github.com/libp2p/go-libp2p"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

func main() {
	h, err := libp2p.New(libp2p.NoListenAddrs, libp2p.Security(libp2ptls.ID, libp2ptls.Constructor(libp2ptls.WithBackend(libp2ptls.BackendStd))))
	if err != nil {
		panic(err)
	}
	defer h.Close()
	fmt.Println("openssl compiled in:", libp2ptls.OpenSSLCompiledIn, "ML-KEM:", libp2ptls.OpenSSLHasMLKEM())
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, build := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"pure Go", []string{"CGO_ENABLED=0"}, nil, "openssl compiled in: false"},
		{"-tags openssl", []string{"CGO_ENABLED=1"}, []string{"-tags", "openssl"}, "openssl compiled in: true"},
	} {
		t.Run(build.name, func(t *testing.T) {
			args := append([]string{"build", "-mod=mod", "-o", filepath.Join(dir, "user")}, build.args...)
			cmd := exec.Command(goBin, append(args, ".")...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), append(build.env, "GOWORK=off", "GOFLAGS=")...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: go %s: %v\n%s", build.name, strings.Join(args, " "), err, out)
			}
			out, err := exec.Command(filepath.Join(dir, "user")).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), build.want) {
				t.Fatalf("%s: the user's binary said %q (%v), want %q...", build.name, out, err, build.want)
			}
		})
	}
}

// requiredVersion is the version of mod that this module's go.mod requires.
func requiredVersion(t *testing.T, root, mod string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == mod {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", mod)
	return ""
}
