// Runs the GPU example under go test; without a CUDA driver or device the test is skipped with
// "skipped: no CUDA device". On a GPU machine:
//
//	cd bindings/go && CGO_CFLAGS=-I$PWD/../../include CGO_LDFLAGS=-L$BUILD/src LD_LIBRARY_PATH=$BUILD/src \
//	  go test -v ./examples/cuda_vector_add
package main

import (
	"errors"
	"testing"
)

func TestVectorAddAndSoftmaxOnTheGPU(t *testing.T) {
	err := run()
	if errors.Is(err, errNoDevice) {
		t.Skip("skipped: no CUDA device")
	}
	if err != nil {
		t.Fatal(err)
	}
}
