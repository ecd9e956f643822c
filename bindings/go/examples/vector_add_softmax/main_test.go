// Runs the example program on the CPU and the interpreter, so go test checks what the README
// shows.
package main

import (
	"strings"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

func TestExampleOnBothTargets(t *testing.T) {
	ctx, err := tri.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	for _, target := range []string{"cpu", "interp"} {
		if err := vectorAdd(ctx, target, 4099); err != nil {
			t.Fatal(err)
		}
		if err := softmax(ctx, target, 3, 777); err != nil {
			t.Fatal(err)
		}
	}
}

func TestErrorCasesNameTheArgument(t *testing.T) {
	ctx, err := tri.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	wrong, err := wrongArgument(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wrong.Error(), "TRI_ERROR_LAUNCH_ARGS: argument 0 (%x) of kernel @vector_add is ptr<f32>") {
		t.Fatalf("message: %v", wrong)
	}
	short, err := tooShort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(short.Message, "vector_add.tri:21:9") || !strings.Contains(short.Message, "argument %x (extent 200 bytes)") {
		t.Fatalf("message: %v", short)
	}
}

func TestTheWholeProgramRuns(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
