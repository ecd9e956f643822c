// Runs the GPU example under go test; without a CUDA driver or device the test is skipped with
// "skipped: no CUDA device". On a GPU machine:
//
//	cd bindings/go && PKG_CONFIG_PATH=$BUILD \
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
