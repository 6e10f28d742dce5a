package main

import (
	"context"
	"errors"
	"io"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("dev: not yet")
}
