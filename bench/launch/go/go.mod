module tri-launch-bench-go

go 1.19

require github.com/tri-jit/tri/bindings/go v0.0.0

replace github.com/tri-jit/tri/bindings/go => ../../../bindings/go
