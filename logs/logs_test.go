package logs

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
)

func TestOrKeepsAGivenLoggerAndDiscardsForNil(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(slog.NewTextHandler(&b, nil))
	if Or(l) != l {
		t.Fatal("Or replaced a given logger")
	}
	d := Or(nil)
	if d == nil || d.Enabled(context.Background(), slog.LevelError) {
		t.Fatalf("Or(nil) = %v, want a logger that discards every level", d)
	}
	d.Error("nothing")
	if b.Len() != 0 {
		t.Fatalf("the discard logger wrote to another logger's output: %q", b.String())
	}
}
