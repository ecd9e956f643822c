module tri-launch-bench-go

go 1.19

require tri v0.0.0

replace tri => ../../../bindings/go
