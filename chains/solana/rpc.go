package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
)

// ErrTransient marks a node answer worth retrying unchanged a little later:
// block not available yet (-32004), block status not yet available (-32014),
// long-term storage unreachable (-32019), HTTP 429 and 5xx, timeouts and
// broken connections. The scanner retries at the same slot.
var ErrTransient = errors.New("solana: transient node error")

// ErrUnsupportedVersion is the node's -32015: a transaction version above
// the maxSupportedTransactionVersion the request announced. The client always
// sends maxSupportedTransactionVersion 0, so this means a newer transaction
// format exists on the cluster and paywatch must be upgraded to read it.
var ErrUnsupportedVersion = errors.New("solana: transaction version not supported by this client")

// ErrFaultySkip is a node answering -32007 or -32009 (skipped) for a slot
// its own getBlocks lists as produced: it cannot serve a block that exists.
// It wraps ErrTransient: the scanner retries at the slot (and reports the
// network unhealthy) and never moves past it.
var ErrFaultySkip = fmt.Errorf("%w: node reports a produced slot as skipped", ErrTransient)

// ErrCleanedUp is the node's -32001: the block was pruned from the node's
// ledger. It is not a skip (the block exists); point URL at an archive RPC.
var ErrCleanedUp = errors.New("solana: block cleaned up on this node")

// maxBody bounds a response body. A "full" JSON mainnet block is a few
// megabytes; accounts mode is smaller.
const maxBody = 256 << 20

// Agave server error codes (rpc-client-api/src/custom_error.rs).
const (
	codeBlockCleanedUp           = -32001
	codeBlockNotAvailable        = -32004
	codeSlotSkipped              = -32007
	codeLongTermSlotSkipped      = -32009
	codeBlockStatusNotAvailable  = -32014
	codeUnsupportedTxVersion     = -32015
	codeLongTermStorageUnreached = -32019
	codeMinContextSlotNotReached = -32016
)

// RPCError is a JSON-RPC error object returned by the node, with the method
// that produced it.
type RPCError struct {
	Method  string
	Code    int
	Message string
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: rpc error %d: %s", e.Method, e.Code, e.Message)
}

// HTTPError is a non-200 HTTP answer that carried no JSON-RPC error object.
type HTTPError struct {
	Method string
	Status int
}

// Error implements error.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s: HTTP status %d", e.Method, e.Status)
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// envelope is a JSON-RPC 2.0 response whose result decodes straight into T
// (one pass over the body, no intermediate raw copy).
type envelope[T any] struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  *T              `json:"result"`
	Error   *rpcErrorBody   `json:"error"`
	ID      json.RawMessage `json:"id"`
}

// call sends one JSON-RPC request through solana-go's transport and decodes
// the answer with decode (which receives the raw body). Errors are classified:
// transport failures, 429 and 5xx wrap ErrTransient; a JSON-RPC error object
// is an *RPCError; a body that does not parse is chains.ErrInvalidResponse
// (decided by decode).
func (c *Client) call(ctx context.Context, method string, params []any, decode func(body []byte) error) error {
	err := c.rpc.RPCCallWithCallback(ctx, method, params, func(_ *http.Request, resp *http.Response) error {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil {
			return fmt.Errorf("%s: reading body: %w: %w", method, ErrTransient, err)
		}
		if len(body) > maxBody {
			return fmt.Errorf("%s: response larger than %d bytes", method, maxBody)
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return fmt.Errorf("%s: %w: %w", method, ErrTransient, &HTTPError{Method: method, Status: resp.StatusCode})
		}
		if resp.StatusCode != http.StatusOK {
			// A 4xx may still carry a JSON-RPC error object.
			var env envelope[json.RawMessage]
			if json.Unmarshal(body, &env) == nil && env.Error != nil {
				return &RPCError{Method: method, Code: env.Error.Code, Message: env.Error.Message}
			}
			return &HTTPError{Method: method, Status: resp.StatusCode}
		}
		return decode(body)
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	var rpcErr *RPCError
	var httpErr *HTTPError
	if errors.As(err, &rpcErr) || errors.As(err, &httpErr) || errors.Is(err, ErrTransient) {
		return err
	}
	if isTransport(err) {
		return fmt.Errorf("%s: %w: %w", method, ErrTransient, err)
	}
	return err
}

// isTransport reports whether err is a network-level failure (timeout,
// refused or reset connection, truncated stream).
func isTransport(err error) bool {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

// decodeEnvelope decodes body as a JSON-RPC response into out (result) and
// returns the node's error object, if any, as an *RPCError. found is false
// when the result is null. Anything unparseable, or a response with neither
// result nor error, is reported through invalid.
func decodeEnvelope[T any](method string, body []byte, out *T, invalid func(error) error) (found bool, err error) {
	var env envelope[T]
	if err := json.Unmarshal(body, &env); err != nil {
		return false, invalid(err)
	}
	if env.Error != nil {
		return false, &RPCError{Method: method, Code: env.Error.Code, Message: env.Error.Message}
	}
	if env.JSONRPC != "2.0" {
		return false, invalid(fmt.Errorf("jsonrpc version %q", env.JSONRPC))
	}
	if env.Result != nil {
		*out = *env.Result
		return true, nil
	}
	// Rare path: tell "result": null from a missing result.
	var probe struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.Result) == 0 {
		return false, invalid(errors.New("response has neither result nor error"))
	}
	return false, nil
}
