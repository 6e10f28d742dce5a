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
	for _, p := range ports {
		parts := strings.Split(p, ":")
		if len(parts) != 3 || parts[0] != "127.0.0.1" || parts[2] != port {
			t.Errorf("compose publishes %q: want 127.0.0.1:<host port>:%s (the host's loopback, to the example's listen port)", p, port)
		}
	}
}
