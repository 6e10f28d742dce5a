package logs

import "log/slog"

// discard logs nothing.
var discard = slog.New(slog.DiscardHandler)

// Or returns l, or a logger that discards everything when l is nil.
func Or(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discard
	}
	return l
}
