package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
)

// A config string with a NUL, a newline or broken UTF-8 is refused at start
// with an error naming the field, never passed on to a node, a database or
// a log line.
func TestConfigStringsRefuseControlCharacters(t *testing.T) {
	cases := []struct {
		name, yaml, field string
		env               map[string]string
	}{
		{name: "xpub with NUL", yaml: strings.Replace(valid, `"xpubX"`, `"xpub\0X"`, 1), field: "networks.bitcoin.account_key"},
		{name: "xpub with newline", yaml: strings.Replace(valid, `"xpubX"`, `"xpubX\n"`, 1), field: "networks.bitcoin.account_key"},
		{name: "rpc url with newline", yaml: strings.Replace(valid, `18443"`, `18443\nHost: evil"`, 1), field: "networks.bitcoin.rpc_url"},
		{name: "database url with NUL", yaml: strings.Replace(valid, "postgres://u@127.0.0.1/pw", `"postgres://u@127.0.0.1/pw\0"`, 1), field: "database_url"},
		{name: "listen with newline", yaml: valid + "listen: \"127.0.0.1:8080\\n\"\n", field: "listen"},
		{name: "instance with escape", yaml: valid + "instance: \"a\\eb\"\n", field: "instance"},
		{name: "static price with NUL", yaml: strings.Replace(valid, `BTC: "50000"`, `BTC: "50000\0"`, 1), field: "rates.static"},
		{name: "webhook name with NUL", yaml: valid + "webhooks: [{name: \"a\\0\", url: \"http://h/x\", secret_env: S}]\n", field: "webhooks[0].name"},
		{name: "webhook url with CR", yaml: valid + "webhooks: [{name: a, url: \"http://h/x\\r\", secret_env: S}]\n", field: "webhooks[0].url"},
		{name: "webhook secret env with newline", yaml: valid + "webhooks: [{name: a, url: \"http://h/x\", secret_env: \"S\\nT\"}]\n", field: "webhooks[0].secret_env"},
		{name: "env database url with invalid UTF-8", yaml: valid, field: "database_url",
			env: map[string]string{"PAYWATCH_DATABASE_URL": "postgres://u@h/d\xed\xa0\x80"}},
		{name: "env rpc url with newline", yaml: valid, field: "networks.bitcoin.rpc_url",
			env: map[string]string{"PAYWATCH_BITCOIN_RPC_URL": "http://u:p@127.0.0.1:1\r\nX: y"}},
		{name: "env database url with NUL", yaml: valid, field: "database_url",
			env: map[string]string{"PAYWATCH_DATABASE_URL": "postgres://u@h/db\x00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(c.yaml), env(c.env))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %q does not name %q", err, c.field)
			}
			if strings.ContainsAny(err.Error(), "\x00\r\n") || strings.Contains(err.Error(), "u:p@") {
				t.Fatalf("error echoes the bad value or a credential: %q", err)
			}
		})
	}
}
