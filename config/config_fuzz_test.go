package config_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/paywatch/paywatch/config"
)

// FuzzParseConfig parses arbitrary YAML (the config file, webhook entries
// included): it is refused with ErrInvalid or yields a config that
// validates, and writing that config back out and parsing it again gives
// the same config.
func FuzzParseConfig(f *testing.F) {
	example, err := os.ReadFile("paywatch.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(valid))
	f.Add([]byte(valid + "webhooks: [{name: shop, url: \"https://shop.example/hook\", secret_env: SHOP_SECRET, start: now}]\n"))
	f.Add([]byte(valid + "webhooks: [{name: a, url: \"http://h/x\\r\", secret_env: S}]\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := config.Parse(bytes.NewReader(body), env(nil))
		if err != nil {
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := config.Parse(bytes.NewReader(out), env(nil))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		// Compared as written out: nil and empty lists are the same setting.
		if out2, err := yaml.Marshal(again); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the config:\n%s\n----\n%s", out, out2)
		}
	})
}
