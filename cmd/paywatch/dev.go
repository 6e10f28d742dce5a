package main

import (
	"context"
	"errors"
	"io"
)

// errSandboxMoved answers `paywatch dev`: the sandbox is its own command, so
// that this binary links no simulated node, installer or test key.
var errSandboxMoved = errors.New("the sandbox is its own command now: `make run`, or bin/paywatch-sandbox " +
	"(and `bin/paywatch-sandbox pay <intent-id>` for what was `paywatch dev pay`)")

func runDev(context.Context, []string, io.Writer, io.Writer) error { return errSandboxMoved }
