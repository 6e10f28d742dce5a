// Package logs is where a component gets its logger when its caller gave
// none: every package takes an injected *slog.Logger in its options, and a
// nil one means "log nothing", written once here rather than in each
// constructor.
package logs
