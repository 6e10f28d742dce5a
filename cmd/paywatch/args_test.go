package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A command-line argument with a control character or broken UTF-8 is
// refused before the command runs (no config is read, no database opened),
// with an error naming the argument's position and not echoing it.
func TestArgumentsRefuseControlCharacters(t *testing.T) {
	for _, args := range [][]string{
		{"rescan", "--network", "bitcoin\n", "--from", "1"},
		{"transfers", "resolve", "tr_01J\x00", "--action", "ignore", "--note", "x"},
		{"apikey", "create", "--name", "ops\x1b[2J", "--scope", "operator"},
		{"status", "--config", "/etc/paywatch.yaml\r"},
		{"transfers", "resolve", "tr_\xed\xa0\x80", "--action", "ignore", "--note", "x"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "argument") {
			t.Fatalf("%q: err = %v, want an argument error", args, err)
		}
		if strings.ContainsAny(err.Error(), "\x00\n\r\x1b") {
			t.Fatalf("%q: error echoes the value: %q", args, err)
		}
	}
	// A note may span lines.
	if err := checkArgs([]string{"resolve", "tr_x", "--note", "line 1\nline 2"}); err != nil {
		t.Fatalf("multi-line note refused: %v", err)
	}
	if err := checkArgs([]string{"--note=a\nb"}); err != nil {
		t.Fatalf("multi-line --note= refused: %v", err)
	}
}
