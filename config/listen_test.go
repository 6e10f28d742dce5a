package config_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/paywatch/paywatch/config"
)

// docker-compose publishes the API on the host's loopback only (a TLS
// proxy on the host is the way in), and the example config it mounts
// listens on the container's interfaces, where that published port
// arrives (127.0.0.1 inside a container is unreachable from outside it).
func TestComposePublishesOnLoopbackToAReachableListener(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("paywatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := config.Parse(f, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil || config.LoopbackHost(host) || host == "" && port == "" {
		t.Fatalf("the example listens on %q: a container's published port cannot reach it", c.Listen)
	}
	ports := compose.Services["paywatch"].Ports
	if len(ports) == 0 {
		t.Fatal("the paywatch service publishes no port")
	}
	_, adminPort, err := net.SplitHostPort(c.AdminAddr())
	if err != nil || config.LoopbackAddr(c.AdminAddr()) {
		t.Fatalf("the example's admin listener %q: a container's published port cannot reach it", c.AdminAddr())
	}
	published := map[string]bool{}
	for _, p := range ports {
		parts := strings.Split(p, ":")
		if len(parts) != 3 || parts[0] != "127.0.0.1" || (parts[2] != port && parts[2] != adminPort) {
			t.Errorf("compose publishes %q: want 127.0.0.1:<host port>:%s or :%s (the host's loopback, to the example's listen or admin port)", p, port, adminPort)
		}
		published[parts[len(parts)-1]] = true
	}
	if !published[port] || !published[adminPort] {
		t.Errorf("compose publishes %v: want both the API's port %s and the admin port %s", ports, port, adminPort)
	}
}

// The operator's surfaces (/metrics, the console) are never on a public
// API listener unless the operator says so: admin_listen empty serves them
// on a loopback API listener, or else on 127.0.0.1:8090; "api" keeps them
// on the API's listener whatever it is (issue 34 item 4: they were served
// to anyone by default).
func TestAdminSurfacesStayOffAPublicListenerByDefault(t *testing.T) {
	for _, c := range []struct {
		listen, admin, want string
	}{
		{"127.0.0.1:8080", "", ""},
		{"[::1]:8080", "", ""},
		{"localhost:8080", "", ""},
		{"0.0.0.0:8080", "", config.DefaultAdminListen},
		{":8080", "", config.DefaultAdminListen},
		{"192.0.2.10:8080", "", config.DefaultAdminListen},
		{"0.0.0.0:8080", "api", ""},
		{"0.0.0.0:8080", "0.0.0.0:9100", "0.0.0.0:9100"},
		{"127.0.0.1:8080", "127.0.0.1:9100", "127.0.0.1:9100"},
	} {
		cfg, err := config.Parse(strings.NewReader(valid+"\nlisten: \""+c.listen+"\"\nadmin_listen: \""+c.admin+"\"\n"), env(nil))
		if err != nil {
			t.Fatalf("listen %s, admin_listen %q: %v", c.listen, c.admin, err)
		}
		if got := cfg.AdminAddr(); got != c.want {
			t.Errorf("listen %s, admin_listen %q: admin listener %q, want %q", c.listen, c.admin, got, c.want)
		}
		wantConsole := c.want
		if wantConsole == "" {
			wantConsole = c.listen
		}
		if got := cfg.ConsoleListen(); got != wantConsole {
			t.Errorf("listen %s, admin_listen %q: console on %q, want %q", c.listen, c.admin, got, wantConsole)
		}
	}
	for _, bad := range []string{"nonsense", "127.0.0.1:8080"} {
		_, err := config.Parse(strings.NewReader(valid+"\nlisten: 127.0.0.1:8080\nadmin_listen: \""+bad+"\"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "admin_listen") {
			t.Errorf("admin_listen %q: %v, want an error naming admin_listen", bad, err)
		}
	}
}
