module github.com/tri-jit/tri/bindings/go

go 1.19
