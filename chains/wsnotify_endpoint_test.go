package chains

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestWSFeedEndpoint: the URL's user info travels as Basic authorization
// (unless the chain's Header gives one) and never in the URL dialed, a
// Header that gives no headers is no headers, and a URL that cannot be a
// websocket is ErrNotifyUnsupported without being echoed.
func TestWSFeedEndpoint(t *testing.T) {
	chainAuth := func() (http.Header, error) { return http.Header{"Authorization": {"Basic Y2hhaW46YXV0aA=="}}, nil }
	none := func() (http.Header, error) { return nil, nil }
	for _, c := range []struct {
		name     string
		url      string
		header   func() (http.Header, error)
		wantURL  string
		wantAuth string
	}{
		{"plain", "ws://127.0.0.1:8546/", nil, "ws://127.0.0.1:8546/", ""},
		{"user info", "wss://u:s3cret@node.example/v3/k", nil, "wss://node.example/v3/k", "Basic dTpzM2NyZXQ="},
		{"user info, Header gives none", "ws://u:s3cret@127.0.0.1:1/", none, "ws://127.0.0.1:1/", "Basic dTpzM2NyZXQ="},
		{"the chain's authorization first", "ws://u:s3cret@127.0.0.1:1/ws", chainAuth, "ws://127.0.0.1:1/ws", "Basic Y2hhaW46YXV0aA=="},
	} {
		got, hdr, err := WSFeed{Name: "test", URL: c.url, Header: c.header}.endpoint()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.wantURL || hdr.Get("Authorization") != c.wantAuth {
			t.Errorf("%s: %q with Authorization %q, want %q with %q", c.name, got, hdr.Get("Authorization"), c.wantURL, c.wantAuth)
		}
	}
	for _, bad := range []string{"", "http://u:s3cret@127.0.0.1:1/", "tcp://127.0.0.1:28332", "ws://", "::"} {
		_, _, err := WSFeed{Name: "test", URL: bad}.endpoint()
		if !errors.Is(err, ErrNotifyUnsupported) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v, want ErrNotifyUnsupported naming no secret", bad, err)
		}
	}
}
